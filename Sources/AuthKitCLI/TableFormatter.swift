/// Aligned text columns separated by two spaces; the last column is not padded.
enum TableFormatter {
    static func format(_ rows: [[String]]) -> String {
        guard let columns = rows.map(\.count).max() else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// Text from the directory or a provider, made safe for a terminal: control characters
/// (escape sequences could rewrite the screen) become spaces.
enum TerminalText {
    static func clean(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: return " "
            default: return scalar
            }
        }))
    }
}
