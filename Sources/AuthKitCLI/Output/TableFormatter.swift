/// Aligned text columns separated by two spaces; the last column is not padded. Widths are
/// terminal columns, not characters: names in Chinese, Japanese or Korean take two columns
/// per character, combining accents none.
enum TableFormatter {
    /// The rows as aligned columns. With `maxWidth` (a terminal's width), the widest columns
    /// are narrowed until every line fits, and cells cut to their column end in `ellipsis`:
    /// a line never wraps.
    static func format(_ rows: [[String]], maxWidth: Int? = nil, ellipsis: String = "…") -> String {
        guard let columns = rows.map(\.count).max() else { return "" }
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], displayWidth(cell)) }
        }
        if let maxWidth {
            let available = max(maxWidth - 2 * (columns - 1), columns)
            let floor = 6
            while widths.reduce(0, +) > available, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > floor
            {
                widths[widest] -= 1
            }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                let fitted = truncate(cell, to: widths[index], ellipsis: ellipsis)
                return index == row.count - 1
                    ? fitted : fitted + String(repeating: " ", count: max(0, widths[index] - displayWidth(fitted)))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// `text` cut to `width` terminal columns, ending in `ellipsis` when cut.
    static func truncate(_ text: String, to width: Int, ellipsis: String) -> String {
        guard displayWidth(text) > width else { return text }
        let room = max(0, width - displayWidth(ellipsis))
        var out = ""
        var used = 0
        for character in text {
            let w = displayWidth(String(character))
            if used + w > room { break }
            out.append(character)
            used += w
        }
        return out + ellipsis
    }

    /// Terminal columns `text` takes (Unicode East Asian Width W/F: 2; marks and zero-width: 0).
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format: return width
            default: return width + (isWide(scalar.value) ? 2 : 1)
            }
        }
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
