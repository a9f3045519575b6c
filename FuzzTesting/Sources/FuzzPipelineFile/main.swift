// Fuzz target: the pipeline-file loader (YAML through Yams, then bookpipe's own checks with
// file:line:column errors). Every input ends in a pipeline or a PipelineFileError naming a place
// inside the file, never a crash.
import BookpipePipeline

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPipelineFile(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    do {
        _ = try PipelineFile.parse(text, fileName: "fuzz.yaml")
    } catch {
        precondition(error.location.line >= 1, "an error names line \(error.location.line), before the first line")
        _ = error.description
    }
    return 0
}
