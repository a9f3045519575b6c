import BookpipePipeline

/// The stage catalogue the command line builds pipeline files from: the lists each area offers
/// (``CSVStages``, ``ScanStages``, ``ScanPhotoStages``, ``LibraryStages``, ``EnrichmentStages``, ``ReportStages``, ``ExportStages``, ``FilterStages``). A module that adds stages defines
/// its own list of ``StageDescriptor``s and is added here (or with ``StageRegistry/adding(_:)``);
/// no list of single stages is kept anywhere else.
public enum StandardStages {
    /// Every built-in stage.
    public static let registry = StageRegistry(
        CSVStages.descriptors + ScanStages.descriptors + ScanPhotoStages.descriptors + LibraryStages.descriptors + EnrichmentStages.descriptors + ReportStages.descriptors
            + ExportStages.descriptors + FilterStages.descriptors)
}
