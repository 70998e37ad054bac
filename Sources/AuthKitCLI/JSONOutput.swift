import JOSE

/// Every `--json` output of the command, through the one JSON writer (``StrictJSONEncoder``):
/// keys sorted, and every string escaped for a terminal — C0 and C1 controls, DEL, U+2028/2029
/// and the bidirectional controls — whatever the provider, Graph or the store put in it.
enum JSONOutput {
    /// `value` as one JSON document, indented when `pretty`: by default when standard output is
    /// a terminal (a person reads it), one compact line when piped (a program does).
    static func render<T: Encodable>(_ value: T, pretty: Bool = Terminal.stdoutIsTerminal) throws(JSONOutputError) -> String {
        do {
            return try StrictJSONEncoder(options: pretty ? [.sortedKeys, .prettyPrinted] : [.sortedKeys]).encodeString(value)
        } catch {
            throw JSONOutputError(reason: "\(error)")
        }
    }
}

/// A value that JSON cannot carry (a non-finite number); never expected, never silent.
struct JSONOutputError: Error, CustomStringConvertible {
    var reason: String
    var description: String { "cannot write the JSON output: \(reason)" }
}
