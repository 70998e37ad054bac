extension LoopbackRedirectReceiver {
    /// The link the browser opens when authkit starts one: used once, it sets a cookie that a
    /// callback must then carry, and leads on to `authorizationURL` — which so is never an
    /// argument of `xdg-open` or the browser, where any local user could read its `state`.
    /// Opened a second time, it ends the sign-in (``AuthorizationError/startOpenedTwice``).
    package func startLink(to authorizationURL: String, for timeout: Duration) throws(AuthorizationError) -> String {
        let token: String, cookie: String
        do {
            token = try SecureRandom.token(byteCount: 16)
            cookie = try SecureRandom.token(byteCount: 32)
        } catch {
            throw .randomUnavailable(error.description)
        }
        let path = "/authkit-start/" + token
        state.prepare(
            .init(
                path: path, cookieName: "authkit-\(port)", cookieValue: cookie, location: authorizationURL,
                maxAge: max(60, Int(timeout.components.seconds))))
        return origin + path
    }
}
