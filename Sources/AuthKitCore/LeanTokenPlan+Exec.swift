/// `authkit exec`, as authkit's command runs it (`ExecCommand`): the token in a variable of the
/// environment, then the command in this process's place.
extension LeanTokenPlan {
    /// The plan for `exec [--env NAME] [OPTIONS] -- COMMAND …`: the shared options and `--env`
    /// before `--`, a command after it, a variable authkit takes; anything else is authkit's to
    /// parse or refuse.
    static func exec(
        _ arguments: [String], environment: [String: String], configuration: (String) -> ConfigFile?,
        storageRecord: (String) -> [String: String]
    ) -> LeanTokenPlan {
        guard let end = arguments.firstIndex(of: "--") else { return .handOff }
        let command = Array(arguments[(end + 1)...])
        // (A second `--` first is a word ArgumentParser's terminator handling is not ours to guess.)
        // (A name it could not run is reported in authkit's words, which only plain text keeps.)
        guard let first = command.first, !first.isEmpty, first != "--", first.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return .handOff
        }
        var scanner = FastPathScanner(arguments: Array(arguments[1..<end]), index: 0)
        guard let found = scanner.plugIn(minTTL: FastPathOptions.pluginMinTTL, takesAction: false, own: ["--env"]) else { return .handOff }
        let variable = found.own["--env"] ?? ExecRules.defaultVariable
        guard ExecRules.isVariableName(variable), ExecRules.refusedVariable(variable) == nil else { return .handOff }
        guard
            let (query, socket) = resolve(
                found.options, environment: environment, configuration: configuration, storageRecord: storageRecord)
        else { return .handOff }
        return .exec(query, socket: socket, variable: variable, command: command)
    }
}
