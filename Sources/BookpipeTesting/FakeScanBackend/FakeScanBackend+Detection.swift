import BookpipeCore
import Foundation

extension FakeScanBackend {
    /// One book a vision backend reports for a photo: the payload of a `result` event.
    ///
    /// JSON (the sidecar files and the event): `{"title": …, "author": … or null, "isbn": … or null,
    /// "confidence": 0…1 (may be absent), "boundingBox": {"x", "y", "width", "height"} (may be
    /// absent)}`, the box normalised to the upright uploaded image.
    public struct Detection: Sendable, Hashable, Codable {
        /// The title as the spine shows it (often in capitals).
        public var title: String
        /// The author, if read.
        public var author: String?
        /// The ISBN, if read.
        public var isbn: String?
        /// How sure the backend is, normally 0…1; absent when it does not say.
        public var confidence: Double?
        /// Where the spine is, if known (normalised to the upright uploaded image).
        public var boundingBox: BoundingBox?

        /// Creates a detection.
        public init(title: String, author: String? = nil, isbn: String? = nil, confidence: Double? = nil,
                    boundingBox: BoundingBox? = nil) {
            self.title = title
            self.author = author
            self.isbn = isbn
            self.confidence = confidence
            self.boundingBox = boundingBox
        }

        private enum CodingKeys: String, CodingKey {
            case title, author, isbn, confidence, boundingBox
        }

        /// Writes `author` and `isbn` as `null` when missing (the backend always sends them) and
        /// leaves `confidence` and `boundingBox` out when missing.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(title, forKey: .title)
            try container.encode(author, forKey: .author)
            try container.encode(isbn, forKey: .isbn)
            try container.encodeIfPresent(confidence, forKey: .confidence)
            try container.encodeIfPresent(boundingBox, forKey: .boundingBox)
        }

        /// Five books of the bundled catalogue, used when neither a dictionary entry nor a sidecar
        /// file names a photo's detections: four sure ones and one below 0.60 (review).
        public static let defaultSet: [Detection] = [
            Detection(title: "DUNE", author: "FRANK HERBERT", confidence: 0.94,
                          boundingBox: .init(x: 0.05, y: 0.10, width: 0.08, height: 0.80)),
            Detection(title: "THE HOBBIT", author: "J.R.R. TOLKIEN", confidence: 0.91,
                          boundingBox: .init(x: 0.15, y: 0.08, width: 0.07, height: 0.84)),
            Detection(title: "BELOVED", author: "TONI MORRISON", confidence: 0.88,
                          boundingBox: .init(x: 0.25, y: 0.12, width: 0.06, height: 0.78)),
            Detection(title: "PIRANESI", author: "SUSANNA CLARKE", confidence: 0.81,
                          boundingBox: .init(x: 0.34, y: 0.09, width: 0.07, height: 0.82)),
            Detection(title: "STATION ELEVEN", author: nil, confidence: 0.47,
                          boundingBox: .init(x: 0.44, y: 0.11, width: 0.06, height: 0.80)),
        ]

        /// Reads a sidecar file: a JSON list of detections.
        /// - Throws: the file system's or the decoder's error.
        public static func sidecar(at url: URL) throws -> [Detection] {
            try JSONDecoder().decode([Detection].self, from: Data(contentsOf: url))
        }
    }
}
