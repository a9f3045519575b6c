/// Text from the data made safe to print on a terminal. A title or a file may hold control
/// characters (ESC sequences that clear or recolour the screen, a carriage return that overwrites
/// the line) or bidirectional overrides (U+202E reverses everything after it, file:line included);
/// printed as they are, they change what the person sees around them. `inert` writes each as a
/// visible escape (`\n`, `\r`, `\t`, `\u{1B}`, `\u{202E}`) and leaves every other character,
/// right-to-left letters and marks included, as it is.
public enum TerminalText {
    /// The text with every control character and bidirectional embedding, override or isolate
    /// written as a visible escape.
    public static func inert(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// Typed text with what a terminal's keys leave in it taken out: escape sequences (an arrow
    /// key read by a line reader that does not edit is `ESC [ D`; `ESC O D` in application mode;
    /// CSI sequences with parameters such as `ESC [ 1 ; 5 D`) are removed whole, and every other
    /// C0 or C1 control and DEL is removed. Letters, marks and bidirectional characters stay. A
    /// person's edit passes through this before it is stored, so `←←X` typed where the line is not
    /// edited stores `X`, never `\u{1B}[D\u{1B}[DX`.
    public static func removingControls(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            let value = scalar.value
            guard value == 0x1B || value == 0x9B else {
                if !(value < 0x20 || (0x7F...0x9F).contains(value)) { result.append(scalar) }
                continue
            }
            // ESC: CSI (`[`, or C1 0x9B itself) runs to a final byte 0x40–0x7E; SS3 (`O`) takes one
            // more character; any other ESC pair is dropped whole.
            var isCSI = value == 0x9B
            if !isCSI {
                guard let next = scalars.next() else { break }
                if next == "[" {
                    isCSI = true
                } else if next == "O" {
                    _ = scalars.next()
                    continue
                } else {
                    continue
                }
            }
            while let byte = scalars.next(), !(0x40...0x7E).contains(byte.value) {}
        }
        return String(result)
    }

    /// C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and isolates
    /// (U+202A–U+202E, U+2066–U+2069).
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }
}
