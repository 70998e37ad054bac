@testable import AuthKit
import Testing

/// The one cleaner: what `Terminal` lets out, and what the library keeps of
/// provider text.
@Suite struct ProviderTextTests {
    /// The hostile corpus: ESC sequences (CSI, OSC 52 clipboard write), BEL, 8-bit CSI, NUL,
    /// CR, RLO and the isolates, line/paragraph separators, DEL.
    static let hostile: [String] = [
        "\u{1B}[2J\u{1B}[H", "\u{1B}]52;c;ZWNobyBoaQ==\u{07}", "\u{9B}31m", "a\u{0}b", "over\rwrite",
        "\u{202E}txt.exe", "\u{2066}x\u{2069}", "\u{2067}\u{2068}", "\u{200E}\u{200F}", "\u{061C}", "\u{2028}\u{2029}", "\u{7F}", "\u{85}",
    ]

    @Test(arguments: hostile)
    func displayableLeavesNoSteeringCharacter(text: String) {
        let shown = ProviderText.displayable(text)
        #expect(!shown.unicodeScalars.contains { ProviderText.steersTerminal($0) })
        #expect(!shown.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || (0x80...0x9F).contains($0.value) })
        #expect(shown.unicodeScalars.count == text.unicodeScalars.count)  // replaced one for one, never dropped
    }

    @Test func displayableKeepsTextLinesAndEveryScript() {
        for text in ["plain ascii", "two\nlines\twith tab", "Seán Ó Briain", "名前", "مرحبا", "👩‍💻 dev", "‘quoted’ — ✓"] {
            #expect(ProviderText.displayable(text) == text)
        }
    }

    @Test(arguments: hostile)
    func cleanLeavesNoControlEither(text: String) {
        let cleaned = ProviderText.clean("x" + text + "y") ?? ""
        #expect(!cleaned.unicodeScalars.contains { ProviderText.steersTerminal($0) || $0 == "\n" })
    }
}
