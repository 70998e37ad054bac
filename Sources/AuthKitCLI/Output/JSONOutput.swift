import StrictJSON
import JOSE

/// Every `--json` output of the command, through the one JSON writer (``StrictJSONEncoder``):
/// keys sorted, every member always there (`null` when it has no value, so the shape is stable
/// for scripts), names in `snake_case` unless they are another system's (Graph's), and every
/// string escaped for a terminal — C0 and C1 controls, DEL, U+2028/2029 and the bidirectional
/// controls — whatever the provider, Graph or the store put in it.
enum JSONOutput {
    /// `value` as one JSON document, indented when `pretty`: by default when standard output is
    /// a terminal (a person reads it), one compact line when piped (a program does).
    static func render<T: Encodable>(
        _ value: T, pretty: Bool = Terminal.stdoutIsTerminal, keys: StrictJSONEncoder.KeyEncoding = .snakeCase
    ) throws(JSONOutputError) -> String {
        do {
            return try StrictJSONEncoder(
                options: pretty ? [.sortedKeys, .prettyPrinted] : [.sortedKeys], nilEncoding: .null, keyEncoding: keys
            ).encodeString(value)
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
