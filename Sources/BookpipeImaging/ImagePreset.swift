/// A target for prepared photos: the long edge, the JPEG quality, and the file size to aim for.
public struct ImagePreset: Sendable, Hashable {
    /// The name used on the command line.
    public let name: String
    /// The longer side of the output in pixels (pictures already smaller are not enlarged).
    public let longEdge: Int
    /// The JPEG quality tried first.
    public let quality: Int
    /// The file size to aim for in bytes, or nil for no target.
    public let targetBytes: ClosedRange<Int>?
    /// The lowest quality the size targeting may go down to.
    public let qualityFloor: Int

    /// Creates a preset.
    public init(name: String, longEdge: Int, quality: Int, targetBytes: ClosedRange<Int>?, qualityFloor: Int) {
        self.name = name
        self.longEdge = longEdge
        self.quality = quality
        self.targetBytes = targetBytes
        self.qualityFloor = min(qualityFloor, quality)
    }

    /// For Google Gemini: 3072 px, quality 90, 400–600 KB (quality may go down to 60).
    public static let gemini = ImagePreset(name: "gemini", longEdge: 3072, quality: 90,
                                           targetBytes: 400_000...600_000, qualityFloor: 60)
    /// For Cloudflare Workers AI: 1536 px, quality 85, 150–300 KB (quality may go down to 60).
    public static let cloudflare = ImagePreset(name: "cloudflare", longEdge: 1536, quality: 85,
                                               targetBytes: 150_000...300_000, qualityFloor: 60)
    /// For uploading elsewhere: 1920 px, quality 85, no size target.
    public static let upload = ImagePreset(name: "upload", longEdge: 1920, quality: 85,
                                           targetBytes: nil, qualityFloor: 85)

    /// The built-in presets.
    public static let all: [ImagePreset] = [.gemini, .cloudflare, .upload]

    /// The built-in preset called `name`, or nil.
    public static func named(_ name: String) -> ImagePreset? {
        all.first { $0.name == name.lowercased() }
    }
}
