/// RFC 3339 in UTC (`2026-11-28T05:00:00Z`), for JSON answers.
package enum RFC3339 {
    /// The time `seconds` after the Unix epoch, to the second.
    package static func utc(_ seconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondsOfDay = seconds - days * 86400
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
