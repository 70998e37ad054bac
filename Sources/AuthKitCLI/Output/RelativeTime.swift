#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// "in 52 min", "3 h ago": times people read at a glance.
enum RelativeTime {
    static func describe(_ date: Date, now: Date = Date()) -> String {
        let seconds = Int(clamping: date.timeIntervalSince(now).rounded())
        let magnitude = abs(seconds)
        if magnitude < 5 { return "just now" }
        let amount: String
        switch magnitude {
        case ..<60: amount = "\(magnitude) s"
        case ..<3600: amount = "\(magnitude / 60) min"
        case ..<(48 * 3600): amount = "\(magnitude / 3600) h \(magnitude % 3600 / 60) min"
        default: amount = "\(magnitude / 86400) days"
        }
        return seconds >= 0 ? "in \(amount)" : "\(amount) ago"
    }

    /// RFC 3339 in UTC, for JSON.
    static func rfc3339(_ date: Date) -> String {
        let total = Int(clamping: date.timeIntervalSince1970.rounded(.down))
        let days = total >= 0 ? total / 86400 : (total - 86399) / 86400
        let secondsOfDay = total - days * 86400
        // Civil from days (Howard Hinnant).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(secondsOfDay / 3600)):\(two(secondsOfDay % 3600 / 60)):\(two(secondsOfDay % 60))Z"
    }
}
