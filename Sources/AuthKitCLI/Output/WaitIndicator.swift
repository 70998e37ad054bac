import AuthKit
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Shows the sign-in's progress on standard error: on a terminal, a spinner with the time
/// left; otherwise plain lines (one per minute while waiting).
final class WaitIndicator: Sendable {
    private struct State {
        var deadline: Date?
        var message = ""
        var timer: DispatchSourceTimer?
        var frame = 0
        var lastPlainMinute: Int?
        var lineDrawn = false
    }

    private let state = Mutex(State())
    private let interactive = Terminal.stderrIsTerminal

    func show(_ event: SignInFlow.Event) {
        switch event {
        case .discovered(let issuer):
            line("Provider: \(ProviderText.displayable(issuer))")
        case .openURL(let url, let browser):
            switch browser {
            case .launched?:
                line(
                    "Opened your browser. If nothing appears, open this URL yourself:\n\n  \(ProviderText.displayable(url.absoluteString))\n"
                )
            case .failed(let reason)?:
                line(
                    "Could not start a browser (\(ProviderText.displayable(reason))). Open this URL yourself:\n\n  "
                        + "\(ProviderText.displayable(url.absoluteString))\n")
            case nil:
                line("Open this URL in a browser to sign in:\n\n  \(ProviderText.displayable(url.absoluteString))\n")
            }
        case .waiting(let deadline, let acceptsPaste):
            if acceptsPaste {
                line(
                    "When the browser ends on an address that does not load (another machine), copy that whole address, "
                        + "paste it here and press Enter.")
            }
            start(
                deadline: deadline,
                message: acceptsPaste ? "Waiting for the sign-in or a pasted address" : "Waiting for the sign-in in the browser")
        case .refused(let error):
            line("Ignored: \(error)")
        case .deviceCode(let authorization):
            var text =
                "To sign in, open \(ProviderText.displayable(authorization.verificationURI.absoluteString)) on any device and enter the code:\n\n  "
                + "\(ProviderText.displayable(authorization.userCode))\n"
            if let complete = authorization.verificationURIComplete {
                text += "\n(or open \(ProviderText.displayable(complete.absoluteString)), which has the code filled in)\n"
            }
            line(text)
            start(deadline: authorization.expiresAt, message: "Waiting for the code to be approved")
        case .devicePending(let slowDown):
            if slowDown { line("The provider asked authkit to poll less often.") }
        case .exchanging:
            stop()
            line("Checking the sign-in…")
        }
    }

    private func line(_ text: String) {
        let redraw = state.withLock { state -> Bool in
            let drawn = state.lineDrawn
            state.lineDrawn = false
            return drawn
        }
        Terminal.write(fd: 2, (redraw ? "\r\u{1B}[K" : "") + (Voice.asciiOnly(fd: 2) ? Voice.ascii(text) : text) + "\n")
    }

    private func start(deadline: Date, message: String) {
        stop()
        if !interactive {
            Terminal.printError("\(message) (\(Self.remaining(deadline)) left)…")
        }
        let interval: DispatchTimeInterval = interactive ? .milliseconds(120) : .seconds(5)
        state.withLock { state in
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
            timer.schedule(deadline: .now(), repeating: interval)
            timer.setEventHandler { [weak self] in self?.tick() }
            state.deadline = deadline
            state.message = message
            state.timer = timer
            state.lastPlainMinute = nil
            timer.resume()
        }
    }

    private func tick() {
        let output: String? = state.withLock { state in
            guard let deadline = state.deadline else { return nil }
            let left = Self.remaining(deadline)
            if interactive {
                let ascii = Voice.asciiOnly(fd: 2)
                let frames = ascii ? ["|", "/", "-", "\\"] : ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
                state.frame = (state.frame + 1) % frames.count
                state.lineDrawn = true
                return "\r\u{1B}[K\(frames[state.frame]) \(state.message)\(ascii ? "..." : "…") \(left) left"
            }
            let minutes = max(0, Int(clamping: deadline.timeIntervalSinceNow) / 60)
            guard state.lastPlainMinute != minutes else { return nil }
            let first = state.lastPlainMinute == nil
            state.lastPlainMinute = minutes
            return first ? nil : "\(state.message) (\(left) left)…\n"
        }
        if let output { Terminal.write(fd: 2, Voice.asciiOnly(fd: 2) ? Voice.ascii(output) : output) }
    }

    func stop() {
        let (timer, drawn) = state.withLock { state -> (DispatchSourceTimer?, Bool) in
            let timer = state.timer
            state.timer = nil
            state.deadline = nil
            let drawn = state.lineDrawn
            state.lineDrawn = false
            return (timer, drawn)
        }
        timer?.cancel()
        if drawn { Terminal.write(fd: 2, "\r\u{1B}[K") }
    }

    static func remaining(_ deadline: Date) -> String {
        let seconds = max(0, Int(clamping: deadline.timeIntervalSinceNow.rounded()))
        return "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
    }
}
