import BookpipeCore
import BookpipeLibrary
import BookpipeReview
import Foundation
import Hummingbird
import Mustache

/// `bookpipe review serve`: the review queue as a local web app (docs/decisions/0023).
///
/// It binds 127.0.0.1 only. Every page and action needs the access token (``ReviewAccess``);
/// every data-changing request is a POST carrying the CSRF token. Decisions go through the
/// library contract exactly as the command line's do (``LibraryReviewStore/applyReview(_:ids:at:versions:)``:
/// the same ``ReviewRules``, locks and history), with the version the page saw, so two tabs
/// deciding one item never both win: the second gets 409 and how the item stands now. Undo
/// (``LibraryReviewStore/undoReview(actionIDs:at:)``) puts the record back exactly. The photo
/// cleanup runs when the server stops (``ReviewQueue/cleanUp()``), so an undo never finds its
/// photo deleted; the next run of any command would do it too.
///
/// ```swift
/// let server = ReviewServer(queue: queue)
/// let app = server.application(port: 0) { url in print(url) }
/// try await app.runService()
/// ```
public struct ReviewServer: Sendable {
    /// The queue decided through the library contract.
    public let queue: ReviewQueue
    /// The tokens.
    public let access: ReviewAccess
    /// Searches the local catalogue for `/`; nil when none is configured.
    public let search: (@Sendable (String) async throws -> [CatalogueHit])?

    /// A server over a queue.
    /// - Parameters:
    ///   - queue: The library's review queue.
    ///   - access: The tokens; fresh random ones by default.
    ///   - search: The local catalogue's search, when one is configured.
    public init(queue: ReviewQueue, access: ReviewAccess = ReviewAccess(),
                search: (@Sendable (String) async throws -> [CatalogueHit])? = nil) {
        self.queue = queue
        self.access = access
        self.search = search
    }

    /// The address to print: the page with the token.
    public func url(port: Int) -> String { "http://127.0.0.1:\(port)/?token=\(access.token)" }

    /// The application on 127.0.0.1:`port` (0: a free port); `onRunning` gets the port once it listens.
    /// Run it with `runService()` (stops on SIGINT/SIGTERM) or `run()` (stops when its task is cancelled).
    public func application(port: Int, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol {
        Application(router: router(),
                    configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port),
                                                            serverName: nil),
                    onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) })
    }

    /// The routes behind the access check.
    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: AccessCheck(access: access))
        let handlers = ReviewHandlers(server: self)
        router.get("/") { _, _ in handlers.page() }
        router.get("/app.js") { _, _ in ReviewHandlers.asset(PackageResources.review_js, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in ReviewHandlers.asset(PackageResources.review_css, type: "text/css; charset=utf-8") }
        router.get("/api/queue") { _, _ in await handlers.queuePayload() }
        router.get("/api/select") { request, _ in
            var parameters: [String: String] = [:]
            for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
            return await handlers.select(parameters)
        }
        router.get("/api/item") { request, _ in await handlers.item(id: request.uri.queryParameters.get("id")) }
        router.get("/crop") { request, _ in await handlers.crop(id: request.uri.queryParameters.get("id")) }
        router.get("/api/search") { request, _ in await handlers.searchCatalogue(request.uri.queryParameters.get("q")) }
        router.post("/api/decide") { request, _ in await handlers.decide(try await request.body.collect(upTo: 1 << 22)) }
        router.post("/api/undo") { request, _ in await handlers.undo(try await request.body.collect(upTo: 1 << 20)) }
        for path in ["/api/decide", "/api/undo"] {
            router.get(RouterPath(path)) { _, _ in ReviewHandlers.methodNotAllowed() }
        }
        return router
    }
}

/// The access check in front of every route: the token (cookie, or once in the query of a GET,
/// answered with the cookie and a redirect that drops it from the address), and for every other
/// method than GET the CSRF header and a same-origin `Origin`. Adds the security headers
/// (CSP `default-src 'self'`, no sniffing, no referrer, no framing, no caching) to every answer.
struct AccessCheck: RouterMiddleware {
    typealias Context = BasicRequestContext
    let access: ReviewAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        let cookie = ReviewAccess.cookieToken(request.headers[.cookie])
        if ReviewAccess.matches(cookie, access.token) {
            if request.method == .get || request.method == .head {
                response = try await next(request, context)
            } else if !ReviewAccess.matches(request.headers[.init("X-CSRF-Token")!], access.csrf) {
                response = ReviewHandlers.problem(.forbidden, "The request has no valid CSRF token: reload the page.")
            } else if let origin = request.headers[.origin], origin != "http://" + (request.head.authority ?? "") {
                response = ReviewHandlers.problem(.forbidden, "The request comes from another origin (\(origin)).")
            } else {
                response = try await next(request, context)
            }
        } else if request.method == .get, ReviewAccess.matches(request.uri.queryParameters.get("token"), access.token) {
            response = Response(status: .seeOther)
            response.headers[.location] = request.uri.path
            response.headers[.setCookie] = access.setCookie
        } else {
            response = ReviewHandlers.problem(.forbidden, "Open the address `bookpipe review serve` printed (it carries the token).")
        }
        response.headers[.contentSecurityPolicy] = "default-src 'self'; img-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
        // Literal header names: `init?` fails only for characters a field name cannot hold.
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("X-Frame-Options")!] = "DENY"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
