import Logging
import SecretStore

/// A sign-in record whose rotated refresh token the store refused, waiting in the kernel keyring
/// (``PendingSave``) until a refresh under the group's lock puts it back into the store. It
/// applies only to the record it was derived from (``RefreshStateMachine/pending(_:replacing:appliesTo:)``);
/// anything else replaced it, and it is forgotten.
enum PendingRecord {
    /// Keeps `record`, derived from the record of generation `replacing`; false when the kernel
    /// keyring refused it too.
    static func keep(_ record: TokenRecord, for key: ItemKey, replacing: Int, logger: Logger) -> Bool {
        do {
            var bytes = try record.encoded()
            defer { for index in bytes.indices { bytes[index] = 0 } }
            try PendingSave.keep(bytes, for: key, replacing: String(replacing))
            logger.debug("the store refused the rotated refresh token; kept in the kernel keyring until it can be saved")
            return true
        } catch {
            logger.debug("the rotated refresh token could not be kept anywhere")
            return false
        }
    }

    /// The pending record for `key` when it still applies to `current`; one that does not is
    /// forgotten.
    static func find(_ key: ItemKey, current: TokenRecord?, logger: Logger) -> TokenRecord? {
        guard let pending = PendingSave.find(key) else { return nil }
        guard let record = try? TokenRecord.decode(pending.secret), let current,
            RefreshStateMachine.pending(record, replacing: pending.replacing, appliesTo: current)
        else {
            PendingSave.forget(key)
            logger.debug("a pending record no longer applies; forgotten")
            return nil
        }
        return record
    }
}
