import BookpipeCore
import BookpipeLibrary
import BookpipeReview
import Foundation
import Hummingbird
import Mustache

/// The server's handlers: each reads or decides through the library contract and answers JSON
/// (data for the page's script, which puts it into the page as text only), a JPEG or the page.
struct ReviewHandlers: Sendable {
    let server: ReviewServer
    let template: MustacheTemplate?

    init(server: ReviewServer) {
        self.server = server
        template = try? MustacheTemplate(string: String(decoding: PackageResources.review_page_html_mustache, as: UTF8.self))
    }

    var store: any Library { server.queue.store }

    /// The page: static markup; the CSRF token in a meta tag (hex, escaped anyway). Every value
    /// from the library reaches the page through the JSON API and `textContent`, never as markup.
    func page() -> Response {
        guard let template else { return Self.problem(.internalServerError, "The page template does not parse.") }
        let html = template.render(["csrf": server.access.csrf, "search": server.search != nil])
        return Self.asset(Array(html.utf8), type: "text/html; charset=utf-8")
    }

    /// The queue, newest first, with counts by kind, read without decoding records
    /// (``ReviewQueue/list(kind:)``): 10,000 items cost what `review list --json` does.
    func queuePayload() async -> Response {
        do {
            let entries = try await server.queue.list()
            var counts = ["scan": 0, "match": 0]
            for entry in entries { counts[entry.kind.rawValue, default: 0] += 1 }
            return Self.json(QueuePayload(items: entries.map(QueueSummary.init), counts: counts, canSearch: server.search != nil))
        } catch {
            return Self.problem(.internalServerError, error.description)
        }
    }

    /// The queued items a filter selects, with their versions now: what a bulk decision (or a
    /// decision for identical detections) posts back. Reads the queued records in full.
    func select(_ parameters: [String: String]) async -> Response {
        var filter = SelectionFilter()
        if let kind = parameters["kind"], !kind.isEmpty {
            guard let parsed = ReviewKind(rawValue: kind) else { return Self.problem(.badRequest, "kind is scan or match, not \(kind).") }
            filter.kind = parsed
        }
        if let text = parameters["confidenceBelow"], !text.isEmpty {
            guard let value = Double(text), value.isFinite else { return Self.problem(.badRequest, "confidenceBelow is a number, not \(text).") }
            filter.confidenceBelow = value
        }
        if let text = parameters["scoreBelow"], !text.isEmpty {
            guard let value = Int(text) else { return Self.problem(.badRequest, "scoreBelow is a whole number, not \(text).") }
            filter.scoreBelow = value
        }
        if let text = parameters["photo"], !text.isEmpty {
            guard text == "with" || text == "without" else { return Self.problem(.badRequest, "photo is with or without, not \(text).") }
            filter.photo = text == "with"
        }
        do {
            // Identical detections: those with the same title and authors as this item.
            if let id = parameters["like"], !id.isEmpty {
                guard let item = try await store.reviewItem(id: id) else { return Self.problem(.notFound, ReviewError.unknownID(id).description) }
                filter.sameAs = QueueSummary.sameKey(title: item.record.title, authors: item.record.authors)
            }
            let items = try await store.reviewQueue(kind: filter.kind, limit: nil, offset: 0)
            let photos = try await server.queue.availablePhotos(of: items.map(\.record))
            let selected = items.filter { item in
                filter.selects(item, photo: item.record.scan?.photoPath.map(photos.contains) ?? false)
            }.map { VersionedID(id: $0.id, version: ReviewRules.version(of: $0.record)) }
            return Self.json(SelectionPayload(count: selected.count, items: selected))
        } catch {
            return Self.problem(.internalServerError, error.description)
        }
    }

    /// One item in full.
    func item(id: String?) async -> Response {
        guard let id else { return Self.problem(.badRequest, "Which item? Give ?id=.") }
        do {
            guard let item = try await store.reviewItem(id: id) else {
                return Self.problem(.notFound, ReviewError.unknownID(id).description)
            }
            let provenance = try await store.provenance(of: item.record)
            let photo = try await server.queue.hasPhoto(item.record)
            let absence = item.record.scan == nil ? nil : await server.queue.photoAbsence(of: item.record)
            return Self.json(ItemPayload(item, provenance: provenance, photo: photo, noPhoto: absence))
        } catch {
            return Self.problem(.internalServerError, "\(error)")
        }
    }

    /// The item's spine crop as a JPEG (its box, or the whole photo), from the managed copy.
    func crop(id: String?) async -> Response {
        guard let id else { return Self.problem(.badRequest, "Which item? Give ?id=.") }
        do {
            guard let item = try await store.reviewItem(id: id) else {
                return Self.problem(.notFound, ReviewError.unknownID(id).description)
            }
            guard let crop = try await server.queue.crop(of: item.record, maxEdge: 1200) else {
                return Self.problem(.notFound, await server.queue.photoAbsence(of: item.record) ?? "no photo")
            }
            var response = Self.asset(crop.jpeg, type: "image/jpeg")
            response.headers[.cacheControl] = "private, max-age=60"
            return response
        } catch {
            return Self.problem(.unprocessableContent, "The crop cannot be made: \(error)")
        }
    }

    /// A decision: applied through the contract with the versions the page saw.
    func decide(_ body: ByteBuffer) async -> Response {
        guard let request = try? JSONDecoder().decode(DecisionRequest.self, from: Data(buffer: body)),
              let decision = request.decision, !request.items.isEmpty else {
            return Self.problem(.badRequest, "A decision is {action: verify|edit|choose|none, items: [{id, version}], …}.")
        }
        let ids = request.items.map(\.id)
        var versions: [String: String] = [:]
        for item in request.items { versions[item.id] = item.version }
        do {
            let receipts = try await store.applyReview(decision, ids: ids, at: Date(), versions: versions)
            let notes = receipts.filter { $0.record.status == .needsCandidateSelection && decision == .verify }.map {
                "\($0.record.id) stays in the queue as an uncertain match: choose its candidate (1–5) or none (n)."
            }
            let items = try await summaries(ids)
            return Self.json(DecisionPayload(actions: receipts.map(\.actionID), items: items, notes: notes))
        } catch {
            return await refusal(error)
        }
    }

    /// An undo of the actions one decision returned.
    func undo(_ body: ByteBuffer) async -> Response {
        guard let request = try? JSONDecoder().decode(UndoRequest.self, from: Data(buffer: body)), !request.actions.isEmpty else {
            return Self.problem(.badRequest, "An undo is {actions: [numbers a decision returned]}.")
        }
        do {
            let records = try await store.undoReview(actionIDs: request.actions, at: Date())
            return Self.json(DecisionPayload(actions: [], items: try await summaries(records.map(\.id)), notes: []))
        } catch {
            return await refusal(error)
        }
    }

    /// The local catalogue's books for `/`.
    func searchCatalogue(_ text: String?) async -> Response {
        guard let search = server.search else {
            return Self.problem(.notFound, "No local catalogue is configured: `bookpipe catalog import` makes one.")
        }
        let text = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return Self.json([CatalogueHit]()) }
        do {
            return Self.json(try await search(text))
        } catch {
            return Self.problem(.internalServerError, "The catalogue search failed: \(error)")
        }
    }

    /// The items as they are now.
    func summaries(_ ids: [String]) async throws -> [QueueSummary] {
        var result: [QueueSummary] = []
        for id in ids {
            guard let item = try await store.reviewItem(id: id) else { continue }
            result.append(QueueSummary(item, photo: try await server.queue.hasPhoto(item.record)))
        }
        return result
    }

    /// A refused decision or undo: 409 with the item as it is now for a change since, 422 for a
    /// decision the rules turn down, 404 for an unknown id, 500 for the library.
    func refusal(_ error: any Error) async -> Response {
        guard let review = error as? ReviewError else { return Self.problem(.internalServerError, "\(error)") }
        switch review {
        case .changedSince(let id, _):
            let current = try? await summaries([id]).first
            return Self.json(ProblemPayload(error: review.description, current: current), status: .conflict)
        case .notUndoable:
            return Self.problem(.conflict, review.description)
        case .unknownID:
            return Self.problem(.notFound, review.description)
        case .noSuchCandidate, .emptyEdit, .uncertainMatch:
            return Self.problem(.unprocessableContent, review.description)
        }
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var response = asset(Array(data), type: "application/json; charset=utf-8")
        response.status = status
        return response
    }

    static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(ProblemPayload(error: message, current: nil), status: status)
    }

    static func methodNotAllowed() -> Response {
        var response = problem(.methodNotAllowed, "This action changes data: it takes POST only.")
        response.headers[.allow] = "POST"
        return response
    }

    static func asset(_ bytes: [UInt8], type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
