import Foundation
import ChildProcess
import Testing
import TestSupport
@testable import AuthKit

@Suite("BrowserLauncher")
struct BrowserLauncherTests {
    @Test("%s is replaced, %% is a literal percent, otherwise the URL is appended")
    func arguments() {
        #expect(BrowserLauncher.arguments(["firefox"], url: "http://x") == ["firefox", "http://x"])
        #expect(BrowserLauncher.arguments(["open", "--url=%s", "100%%"], url: "http://x") == ["open", "--url=http://x", "100%"])
    }

    @Test("$BROWSER is a colon-separated list; without it xdg-open is used")
    func environment() {
        #expect(BrowserLauncher(environment: [:]).commands == [["xdg-open"]])
        #expect(BrowserLauncher(environment: ["BROWSER": ""]).commands == [["xdg-open"]])
        #expect(BrowserLauncher(environment: ["BROWSER": "w3m:python3 my.py %s"]).commands == [["w3m"], ["python3", "my.py", "%s"]])
    }

    @Test("the first command that starts opens the URL, without a shell and without the client secret")
    func launches() async throws {
        let directory = try TestPaths.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("browser.sh")
        let output = directory.appendingPathComponent("opened.txt")
        try """
        #!/bin/sh
        printf '%s|%s|%s' "$1" "$#" "${AUTHKIT_CLIENT_SECRET:-none}" > "\(output.path)"
        """.write(to: script, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: script.path)

        // The secret in the launcher's parent environment, not setenv: other tests of this
        // process start children meanwhile, and would inherit it.
        var launcher = BrowserLauncher(commands: [["/nonexistent/browser"], [script.path]])
        launcher.parentEnvironment = ChildProcess.currentEnvironment() + ["AUTHKIT_CLIENT_SECRET=must-not-leak"]
        let url = "http://127.0.0.1:1/?a=1&b=$(touch%20pwned);x"
        #expect(launcher.open(url) == .launched(command: script.path))
        var text = ""
        for _ in 0..<100 where text.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        }
        #expect(text == "\(url)|1|none")
    }

    @Test("when nothing starts, the caller is told why")
    func failure() {
        guard case .failed(let reason) = BrowserLauncher(commands: [["/nonexistent/a"], ["/nonexistent/b"]]).open("http://x") else {
            Issue.record("launched something"); return
        }
        #expect(reason.contains("/nonexistent/a") && reason.contains("/nonexistent/b"))
    }
}
