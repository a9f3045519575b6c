/// A strict scanner for the plain command lines of the image fast paths (``PrepareJob``,
/// ``CropsJob``): positional arguments, `--name value` or `--name=value` options from a fixed
/// list, and flags. It accepts nothing else: an unknown option, a missing value or `--help` gives
/// nil, and the caller falls back to ArgumentParser, its help and its messages.
struct FastArguments {
    /// Arguments that are not options, in order (everything after `--` included).
    private(set) var positional: [String] = []
    /// The last value given for each option.
    private(set) var values: [String: String] = [:]
    /// The flags given.
    private(set) var flags: Set<String> = []

    init?(_ arguments: ArraySlice<String>, options: Set<String>, flags knownFlags: Set<String> = []) {
        var index = arguments.startIndex
        var optionsEnded = false
        while index < arguments.endIndex {
            let argument = arguments[index]
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
            } else if argument == "--" {
                optionsEnded = true
            } else if knownFlags.contains(argument) {
                flags.insert(argument)
            } else if let equals = argument.firstIndex(of: "="), options.contains(String(argument[..<equals])) {
                values[String(argument[..<equals])] = String(argument[argument.index(after: equals)...])
            } else if options.contains(argument), index + 1 < arguments.endIndex {
                index += 1
                values[argument] = arguments[index]
            } else {
                return nil
            }
            index += 1
        }
    }

    /// The option's value as an integer; `fallback` when the option was not given, nil when its
    /// value is not a whole number.
    func integer(_ name: String, fallback: Int) -> Int? {
        guard let text = values[name] else { return fallback }
        return Int(text)
    }
}
