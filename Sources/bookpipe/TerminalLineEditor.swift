import CEditLine
import Foundation

/// Lines typed on a terminal through libedit: the arrow keys, Home/End, Backspace and Ctrl-A/E
/// edit the line instead of landing in it as escape sequences, and Up and Down recall earlier
/// answers (the walk's history).
///
/// One walk at a time uses it, on the main flow of `bookpipe review` (libedit's readline
/// interface is global state).
enum TerminalLineEditor {
    /// Shows `prompt` and returns the line the person typed (nil at end of input: Ctrl-D on an
    /// empty line). A non-empty answer joins the history.
    static func readLine(prompt: String) -> String? {
        guard let line = prompt.withCString({ CEditLine.readline($0) }) else { return nil }
        defer { free(line) }
        let text = String(cString: line)
        if !text.trimmingCharacters(in: .whitespaces).isEmpty { add_history(text) }
        return text
    }
}
