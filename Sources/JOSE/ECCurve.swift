import CCryptoLoader
import COpenSSL

/// The NIST curves of the ES256/ES384/ES512 algorithms.
enum ECCurve: Int, Sendable, CaseIterable {
    case p256, p384, p521

    /// The JWK `crv` name (RFC 7518 §6.2.1.1).
    init?(jwkName: String) {
        switch jwkName {
        case "P-256": self = .p256
        case "P-384": self = .p384
        case "P-521": self = .p521
        default: return nil
        }
    }

    var jwkName: String {
        switch self {
        case .p256: return "P-256"
        case .p384: return "P-384"
        case .p521: return "P-521"
        }
    }

    /// OpenSSL's group name.
    var groupName: StaticString {
        switch self {
        case .p256: return "prime256v1"
        case .p384: return "secp384r1"
        case .p521: return "secp521r1"
        }
    }

    /// The length of a coordinate, of `r` and of `s` in bytes.
    var coordinateLength: Int {
        switch self {
        case .p256: return 32
        case .p384: return 48
        case .p521: return 66
        }
    }

    /// The algorithm that uses this curve.
    var algorithm: JWSAlgorithm {
        switch self {
        case .p256: return .es256
        case .p384: return .es384
        case .p521: return .es512
        }
    }

    /// The group order n, big-endian, ``coordinateLength`` bytes; empty if OpenSSL could not
    /// provide it (every signature is then refused).
    var order: [UInt8] { CurveOrders.shared.orders[rawValue] }

    /// True when `value` (big-endian, ``coordinateLength`` bytes) satisfies 1 ≤ value < n.
    func isValidScalar(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        let order = self.order
        guard order.count == value.count, value.contains(where: { $0 != 0 }) else { return false }
        for index in 0..<value.count where value[index] != order[index] {
            return value[index] < order[index]
        }
        return false  // equal to n
    }
}

/// The curve orders, read from OpenSSL rather than typed in, so a typo cannot weaken the
/// range check on r and s.
private final class CurveOrders: Sendable {
    static let shared = CurveOrders()
    let orders: [[UInt8]]

    private init() {
        orders = ECCurve.allCases.map { curve in
            let nid: Int32
            switch curve {
            case .p256: nid = NID_X9_62_prime256v1
            case .p384: nid = NID_secp384r1
            case .p521: nid = NID_secp521r1
            }
            guard let group = ak_EC_GROUP_new_by_curve_name(nid) else { return [] }
            defer { ak_EC_GROUP_free(group) }
            guard let order = ak_EC_GROUP_get0_order(group) else { return [] }
            var bytes = [UInt8](repeating: 0, count: curve.coordinateLength)
            let written = ak_BN_bn2binpad(order, &bytes, Int32(bytes.count))
            return written == Int32(bytes.count) ? bytes : []
        }
    }
}
