import BookpipeImaging

/// The AI provider a scan job runs on (`X-AI-Provider`), and the preset its photos are prepared with.
public enum ScanProvider: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Google Gemini: photos at 3072 px on the long edge, JPEG quality 90.
    case gemini
    /// Cloudflare Workers AI: photos at 1536 px on the long edge, JPEG quality 85.
    case cloudflare

    /// The imaging preset the photo is prepared with (``ImagePreset/gemini``, ``ImagePreset/cloudflare``).
    public var preset: ImagePreset {
        switch self {
        case .gemini: return .gemini
        case .cloudflare: return .cloudflare
        }
    }

    /// The other provider (the usual fallback).
    public var other: ScanProvider { self == .gemini ? .cloudflare : .gemini }

    /// The header value: `gemini` or `cloudflare`.
    public var description: String { rawValue }
}
