import SecretStore
import StrictJSON

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AWS credentials kept beside a sign-in: the cache that makes a loop of `aws` calls one STS
/// call. It lives in the sign-in's store and uses the session's sign-in and lock, but is not
/// part of the session's refresh rules.
package struct AWSCredentialCache: Sendable {
    let session: SharedSession

    /// The cache beside `session`'s sign-in.
    package init(session: SharedSession) {
        self.session = session
    }

    /// Temporary AWS credentials for `roleARN`, from the store while they live
    /// ``reuseMargin`` more, else from AWS STS with the sign-in's verified id_token —
    /// kept in the store beside the sign-in (never a plain file), so a loop of `aws` calls
    /// makes one STS call. The exchange happens under the group's lock: tools asking at once
    /// make one call.
    ///
    /// Kept credentials are found only by everything that chose them — the sign-in's account
    /// (and so the session name), the STS endpoint, the region, the role and the duration —
    /// so a run against another STS never answers a later one. STS's expiry is believed only
    /// up to the duration asked for (``STSWebIdentity/maximumDuration`` when none was).
    package func credentials(
        roleARN: String, durationSeconds: Int?, account: String?, endpoint: URL, region: String?
    ) async throws(AWSExchangeError) -> AWSCredentials {
        let (item, record): (StoredItem, TokenRecord)
        do { (item, record) = try await session.select(account: account) } catch { throw .authKit(error) }
        let key = ItemKey(
            group: session.group, issuer: item.key.issuer, clientID: item.key.clientID, account: item.key.account,
            kind: ItemKind.awsCredentials(Key(roleARN: roleARN, durationSeconds: durationSeconds, endpoint: endpoint, region: region))
                .stored)
        let longest = Double(durationSeconds ?? STSWebIdentity.maximumDuration)
        if let cached = await cached(key, longest: longest) { return cached }
        // The id_token first: a refresh takes the group's lock itself.
        let idToken: IDToken
        do { idToken = try await session.validIDToken(account: record.account, minimumLifetime: .seconds(60)) } catch {
            throw .authKit(error)
        }
        let held: RefreshLock.Held
        do { held = try await session.acquireLock() } catch { throw .authKit(error) }
        defer { held.release() }
        if let cached = await cached(key, longest: longest) { return cached }
        var credentials: AWSCredentials
        do {
            credentials = try await STSWebIdentity.assumeRole(
                roleARN: roleARN, sessionName: STSWebIdentity.sessionName(for: record.account), webIdentityToken: idToken.value,
                durationSeconds: durationSeconds, endpoint: endpoint, transport: session.transport)
        } catch { throw .sts(error) }
        credentials.expiration = min(credentials.expiration, session.clock().timeIntervalSince1970 + longest)
        do {
            let bytes = try StrictJSONEncoder().encode(credentials)
            _ = try await session.store.save(bytes, for: key, label: "authkit AWS credentials (\(record.account))")
            session.logger.debug(
                "AWS credentials from STS, kept in the store",
                metadata: ["expires_in_s": "\(Int(credentials.expiration - session.clock().timeIntervalSince1970))"])
        } catch {
            // Not kept: the next call asks STS again. The credentials are good all the same.
            session.logger.debug("AWS credentials could not be kept in the store", metadata: ["error": "\(error)"])
        }
        return credentials
    }

    /// STS credentials are reused while they live this much more: the AWS SDKs ask their
    /// `credential_process` again 15 minutes before the expiry they were given.
    package static let reuseMargin: Double = 16 * 60

    /// Every choice that made the credentials, as the item's kind says it in clear (none of it
    /// is secret): `aws-sts ROLE duration=SECONDS|default endpoint=URL region=REGION|-`.
    package struct Key: Sendable, Equatable {
        package var roleARN: String
        package var durationSeconds: Int?
        package var endpoint: URL
        package var region: String?

        package var stored: String {
            "aws-sts \(roleARN) duration=\(durationSeconds.map(String.init) ?? "default") endpoint=\(endpoint.absoluteString) "
                + "region=\(region ?? "-")"
        }

        package init(roleARN: String, durationSeconds: Int?, endpoint: URL, region: String?) {
            (self.roleARN, self.durationSeconds, self.endpoint, self.region) = (roleARN, durationSeconds, endpoint, region)
        }

        package init?(stored: String) {
            let words = stored.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard words.count == 5, words[0] == "aws-sts", !words[1].isEmpty, words[2].hasPrefix("duration="),
                words[3].hasPrefix("endpoint="), words[4].hasPrefix("region="),
                let endpoint = URL(string: String(words[3].dropFirst("endpoint=".count)))
            else { return nil }
            let duration = String(words[2].dropFirst("duration=".count))
            let region = String(words[4].dropFirst("region=".count))
            guard duration == "default" || Int(duration) != nil else { return nil }
            self.init(roleARN: words[1], durationSeconds: Int(duration), endpoint: endpoint, region: region == "-" ? nil : region)
        }
    }

    /// Kept credentials that live ``reuseMargin`` more, and no longer than `longest`
    /// seconds from now (a record that claims more was not made by this rule).
    private func cached(_ key: ItemKey, longest: Double) async -> AWSCredentials? {
        let now = session.clock().timeIntervalSince1970
        guard let item = try? await session.store.item(for: key), let secret = try? item.validatedSecret(),
            let credentials = try? JSONDocument.storedRecord.decode(AWSCredentials.self, from: secret), credentials.isWellFormed,
            credentials.expiration - now >= Self.reuseMargin, credentials.expiration <= now + longest
        else { return nil }
        session.logger.debug("AWS credentials from the store")
        return credentials
    }
}

/// Why `credential aws` got no credentials: the sign-in's error, or STS's.
package enum AWSExchangeError: Error, Sendable, CustomStringConvertible {
    case authKit(AuthKitError)
    case sts(STSWebIdentity.Failure)

    package var description: String {
        switch self {
        case .authKit(let error): return error.description
        case .sts(let failure): return failure.description
        }
    }
}
