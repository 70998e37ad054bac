#if hasFeature(Embedded)
import CLibc
#elseif canImport(Glibc)
import Glibc
#endif

/// Reading the configuration file: where it is, its owner and mode checked on the open file
/// (``ConfigTrust``), then parsed.
extension ConfigFile {
    /// Reads and parses the file at `path`; a missing file is an empty configuration (unless
    /// `AUTHKIT_CONFIG` names it explicitly). `rules`: as ``parse(_:path:rules:)``.
    package static func load(
        path: String, environment: [String: String], rules: StoreRules
    ) throws(ConfigProblem) -> ConfigFile {
        let bytes: [UInt8], mode: mode_t
        do {
            (bytes, mode) = try FileAccess.read(path) { ConfigTrust.problem(descriptor: $0, path: path) }
        } catch {
            if error == .notFound && environment["AUTHKIT_CONFIG"]?.isEmpty != false {
                return ConfigFile(path: path, defaults: nil, profiles: [:])
            }
            if case .refused(let problem) = error {
                throw ConfigProblem(location: path, problem: "authkit does not use this file: \(problem)")
            }
            throw ConfigProblem(location: path, problem: error.description)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigProblem(location: path, problem: "the file is not UTF-8 text")
        }
        var file = try parse(text, path: path, rules: rules)
        if file.profiles.values.contains(where: { $0.entries["client_secret"] != nil }), mode & (S_IRGRP | S_IROTH) != 0 {
            throw ConfigProblem(
                location: path, key: "client_secret",
                problem: "the file holds a client secret but other users can read it; run chmod 600 \(path)")
        }
        file.path = path
        return file
    }
}
