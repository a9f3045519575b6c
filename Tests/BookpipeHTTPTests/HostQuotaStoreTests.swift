import Foundation
import Testing
import BookpipePipeline
@testable import BookpipeHTTP

@Suite struct HostQuotaStoreTests {
    @Test("The in-memory store keeps the later block per host and finds hosts case-insensitively")
    func keepsLaterBlock() {
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        let store = InMemoryHostQuotaStore([HostQuota(host: "A.example", blockedUntil: now, reason: "first")])
        #expect(store.quota(forHost: "a.example")?.reason == "first")
        store.save(HostQuota(host: "a.example", blockedUntil: now.addingTimeInterval(60), reason: "later"))
        store.save(HostQuota(host: "a.example", blockedUntil: now.addingTimeInterval(30), reason: "earlier"))
        #expect(store.quota(forHost: "A.EXAMPLE")?.reason == "later")
        #expect(store.quota(forHost: "b.example") == nil)
        store.save(HostQuota(host: "b.example", blockedUntil: now, reason: "b"))
        #expect(store.all.map(\.host) == ["a.example", "b.example"])
    }
}
