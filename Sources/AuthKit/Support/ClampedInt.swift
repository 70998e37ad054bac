extension Int {
    /// `value` rounded toward zero and clamped to Int's range; NaN is 0. For numbers that
    /// came from outside (a provider's lifetime, a stored time), where `Int(_:)` would trap
    /// on ±1e300.
    package init(clamping value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9.2e18 {
            self = .max
        } else if value <= -9.2e18 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}
