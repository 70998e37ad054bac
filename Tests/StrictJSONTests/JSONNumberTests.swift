import StrictJSON
import Testing

@Suite struct JSONNumberTests {
    @Test func writesIntegersExactly() {
        #expect(JSONNumber(Int64.min).text == "-9223372036854775808")
        #expect(JSONNumber(UInt64.max).text == "18446744073709551615")
        #expect(JSONNumber(UInt64.max).int64Value == nil)  // does not fit; never wraps
        #expect(JSONNumber(1_763_750_000 as UInt64).int64Value == 1_763_750_000)
    }

    @Test func writesDoublesAndRefusesWhatJSONCannotCarry() {
        #expect(JSONNumber(1.5)?.text == "1.5")
        #expect(JSONNumber(1_500_000_000.0)?.text == "1500000000")
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONNumber(Double.nan) == nil)
    }

    @Test(arguments: ["0", "-0", "12", "1.5", "1e9", "1.5E-3", "-2.5e+3"])
    func acceptsTheGrammar(text: String) {
        #expect(JSONNumber(text: text)?.text == text)
    }

    @Test(arguments: ["", "-", "01", "+1", ".5", "1.", "1e", "1e+", "NaN", "0x10", "1 "])
    func refusesAnythingElse(text: String) {
        #expect(JSONNumber(text: text) == nil)
    }

    @Test func readsIntegralValuesOnly() {
        #expect(JSONNumber(text: "1.5e9")?.int64Value == 1_500_000_000)
        #expect(JSONNumber(text: "1.5")?.int64Value == nil)
        #expect(JSONNumber(text: "1e30")?.int64Value == nil)
        #expect(JSONNumber(text: "-2.5e3")?.doubleValue == -2500)
    }
}
