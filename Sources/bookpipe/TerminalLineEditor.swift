import CEditLine
import Foundation

/// Lines typed on a terminal through libedit: the arrow keys, Home/End, Backspace and Ctrl-A/E
/// edit the line instead of landing in it as escape sequences, and Up and Down recall earlier
/// answers (the walk's history).
///
/// One walk at a time uses it, on the main flow of `bookpipe review` (libedit's readline
/// interface is global state).
enum TerminalLineEditor {
    /// Makes Ctrl-C end the walk the way it ends any program: the terminal's settings as they were
    /// before the walk are put back, then the process stops with SIGINT. The signal is taken by a
    /// dispatch source, on an ordinary thread, not in a signal handler: libedit's own handler
    /// (off from here on) flushed a stdio stream inside the handler, and stalled now and then when
    /// another thread held that stream's lock. Call once, before the first line is read; the
    /// returned source must be kept for as long as the walk runs.
    static func stopOnInterrupt() -> any DispatchSourceSignal {
        bookpipe_readline_leave_signals_alone()
        var settings = termios()
        let hasSettings = tcgetattr(STDIN_FILENO, &settings) == 0
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "bookpipe.review.interrupt"))
        source.setEventHandler {
            if hasSettings {
                var saved = settings
                tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            }
            signal(SIGINT, SIG_DFL)
            kill(getpid(), SIGINT)
        }
        source.resume()
        return source
    }

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
