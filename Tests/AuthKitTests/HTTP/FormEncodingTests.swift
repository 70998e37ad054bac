import Testing
@testable import AuthKit

@Suite("FormEncoding")
struct FormEncodingTests {
    @Test("reserved characters are escaped, space becomes +")
    func escapes() {
        #expect(FormEncoding.escape("a b&c=d+e/f?g%h") == "a+b%26c%3Dd%2Be%2Ff%3Fg%25h")
        #expect(FormEncoding.escape("é") == "%C3%A9")
        #expect(FormEncoding.escape("AZaz09*-._") == "AZaz09*-._")
    }

    @Test("decode inverts encode")
    func roundTrip() throws {
        let fields = [("code", "x y+z"), ("state", "äöü&="), ("empty", "")]
        let decoded = try #require(FormEncoding.decode(FormEncoding.encode(fields)))
        #expect(decoded.map(\.name) == fields.map(\.0))
        #expect(decoded.map(\.value) == fields.map(\.1))
    }

    @Test("bad percent escapes and invalid UTF-8 are rejected")
    func rejectsMalformed() {
        #expect(FormEncoding.decode("a=%4") == nil)
        #expect(FormEncoding.decode("a=%zz") == nil)
        #expect(FormEncoding.decode("a=%ff") == nil)
    }
}
