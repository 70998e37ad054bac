import NIOHTTP1

/// How the receiver answers a request: a page, or (with `location`) a redirect to a result page.
struct CallbackReply: Sendable {
    var status: HTTPResponseStatus
    var title: String
    var message: String
    var location: String? = nil
    /// A `Set-Cookie` value (the start link's).
    var cookie: String? = nil
    /// Called once the reply was written (or could not be: the connection was gone).
    var afterWrite: (@Sendable () -> Void)? = nil

    static let finished = CallbackReply(
        status: .gone, title: "Sign-in already finished", message: "This sign-in has already finished. You can close this window.")

    static let notFound = CallbackReply(status: .notFound, title: "Not found", message: "Not found.")

    static let wrongPath = CallbackReply(
        status: .notFound, title: "Not the sign-in callback", message: "authkit is waiting for the sign-in callback on another path.")

    static let openedTwice = CallbackReply(
        status: .conflict, title: "Sign-in stopped",
        message: "This sign-in link was opened twice, so authkit stopped the sign-in. Run the login again.")

    static let busy = CallbackReply(status: .serviceUnavailable, title: "Busy", message: "Too many requests.")

    static let signedIn = CallbackReply(
        status: .ok, title: "Signed in", message: "Sign-in complete. You can close this window and return to the terminal.")

    static let ignored = CallbackReply(
        status: .badRequest, title: "Not this sign-in",
        message: "This request does not answer the sign-in in progress, so it was ignored. "
            + "If you started a new login, use the newest browser window.")

    static let malformed = CallbackReply(
        status: .badRequest, title: "Malformed callback",
        message: "This request is not a valid sign-in callback, so it was ignored. The sign-in in progress goes on.")
}

/// The pages a callback is redirected to, by the word in their path.
enum CallbackResultPage: String, Sendable, CaseIterable {
    /// The sign-in ended with this callback's code (shown only after a success).
    case signedIn = "signed-in"
    /// The provider answered with an error for this sign-in (shown only after that).
    case failed
    /// A callback with a state that is not this sign-in's.
    case ignored
    /// A callback after the sign-in ended.
    case alreadyUsed = "already-used"
    /// A request on the callback path that is not a valid callback.
    case malformed
}

/// The small pages the browser shows after the redirect.
enum CallbackPage {
    /// Nothing but the page's own inline style: no script, image, font, frame, form target or
    /// connection anywhere (`form-action`, `frame-ancestors` and `base-uri` do not fall back to
    /// `default-src`, so they are named).
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

    static func html(title: String, message: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>authkit: \(escape(title))</title>
        <style>body{font-family:system-ui,sans-serif;margin:3em auto;max-width:36em;line-height:1.5}</style>
        </head><body><h1>\(escape(title))</h1><p>\(escape(message))</p></body></html>

        """
    }

    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
