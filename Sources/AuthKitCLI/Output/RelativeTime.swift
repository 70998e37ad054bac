import AuthKitCore

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
        RFC3339.utc(Int(clamping: date.timeIntervalSince1970.rounded(.down)))
    }
}
