import Foundation

/// Waits for an event a test cannot be told of directly (a child became another program, a
/// receiver started waiting) by checking `condition` every few milliseconds. `timeout` only
/// separates "hung" from "slow": it is generous and never a measurement.
public func until(_ what: String, timeout: Duration = .seconds(180), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw HarnessError("\(what): not within \(timeout)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
