#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date (IMF-fixdate).
enum RetryAfter {
    static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingASCIIWhitespace(), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        guard let date = httpDate(value) else { return nil }
        let seconds = max(0, Int(clamping: date.timeIntervalSince(now).rounded(.up)))
        return .seconds(seconds)
    }

    /// "Sun, 06 Nov 1994 08:49:37 GMT".
    static func httpDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let hour = Int(time[0]), let minute = Int(time[1]), let second = Int(time[2]),
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
            (1...9999).contains(year)  // RFC 9110's four digits: the arithmetic below cannot overflow
        else { return nil }
        // Days from civil (Howard Hinnant's algorithm), to avoid a calendar dependency.
        let y = month < 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = month + 1
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
