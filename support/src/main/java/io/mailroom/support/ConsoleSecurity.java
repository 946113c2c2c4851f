package io.mailroom.support;

import io.javalin.http.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.regex.Pattern;

import static io.mailroom.support.ConsolePages.url;

/**
 * Who is signed in to the console, and whether a form really comes from it. Signing in exchanges an
 * access token for a session cookie ({@code HttpOnly}, {@code SameSite=Strict}, {@code Secure} when
 * configured). Every form post is checked twice against cross-site request forgery: its
 * {@code Origin} (or {@code Referer}) must be this server's, and it must carry the session's
 * synchronizer token. The sign-in form, which has no session yet, uses a double-submit cookie
 * instead. Tokens are compared in constant time; a redirect target is only ever a console page.
 */
final class ConsoleSecurity {

    private static final Logger log = LoggerFactory.getLogger(ConsoleRoutes.class);

    static final String SESSION_COOKIE = "mailroom_session";
    static final String LOGIN_COOKIE = "mailroom_login";
    /** Where a form may send the person back to: a console page, nothing else. */
    private static final Pattern LOCAL_PATH = Pattern.compile("^/console/[A-Za-z0-9/._~%?=&:@+-]*$");

    private final Authenticator auth;
    private final Sessions sessions;
    private final SupportConfig config;
    private final ConsolePages pages;

    ConsoleSecurity(Authenticator auth, Sessions sessions, SupportConfig config, ConsolePages pages) {
        this.auth = auth;
        this.sessions = sessions;
        this.config = config;
        this.pages = pages;
    }

    /**
     * The signed-in session, or: a GET goes to the sign-in page, anything else gets 401, and so does a
     * live refresh (app.js then stops refreshing and says the session ended).
     */
    Sessions.Session requireSession(Context ctx) {
        Sessions.Session s = sessions.find(ctx.cookie(SESSION_COOKIE)).orElse(null);
        if (s != null) {
            return s;
        }
        if (ctx.method().name().equals("GET") && !ConsoleRoutes.isRefresh(ctx)) {
            String next = ctx.path() + (ctx.queryString() == null ? "" : "?" + ctx.queryString());
            throw new ConsoleRoutes.Redirect("/console/login" + (LOCAL_PATH.matcher(next).matches() ? "?next=" + url(next) : ""));
        }
        throw HttpFailure.unauthorized("your session has ended; sign in again");
    }

    /** Both CSRF checks of a signed-in form post: same origin, and the session's token. */
    void checkCsrf(Context ctx, Sessions.Session session) {
        if (!sameOrigin(ctx)) {
            log.info("Refused {} {} by {}: the form came from another origin", ctx.method(), ctx.path(), session.actor.name());
            throw HttpFailure.forbidden("this form was not sent from the console itself; reload the page and try again");
        }
        if (!constantTimeEquals(session.csrfToken, ctx.formParam("csrf"))) {
            log.info("Refused {} {} by {}: missing or wrong CSRF token", ctx.method(), ctx.path(), session.actor.name());
            throw HttpFailure.forbidden("this form has expired; reload the page and try again");
        }
    }

    /**
     * Whether a form post comes from this server's own pages: {@code Origin} (else {@code Referer})
     * must match the configured public origin, or the {@code Host} the browser addressed. A request
     * with neither header is left to the token check (SameSite=Strict already keeps the cookie off
     * cross-site posts); an opaque {@code Origin: null} is refused.
     */
    boolean sameOrigin(Context ctx) {
        String origin = ctx.header("Origin");
        if (origin == null) {
            String referer = ctx.header("Referer");
            if (referer == null) {
                return true;
            }
            origin = originOf(referer);
            if (origin == null) {
                return false;
            }
        }
        if (origin.equals("null")) {
            return false;
        }
        if (config.publicOrigin() != null) {
            return origin.equalsIgnoreCase(config.publicOrigin());
        }
        String host = ctx.header("Host");
        if (host == null) {
            return false;
        }
        try {
            URI u = new URI(origin);
            if (u.getHost() == null) {
                return false;
            }
            String hostPort = u.getHost() + (u.getPort() == -1 ? "" : ":" + u.getPort());
            return hostPort.equalsIgnoreCase(host.trim());
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static String originOf(String url) {
        try {
            URI u = new URI(url);
            if (u.getScheme() == null || u.getHost() == null) {
                return null;
            }
            return u.getScheme() + "://" + u.getHost() + (u.getPort() == -1 ? "" : ":" + u.getPort());
        } catch (URISyntaxException e) {
            return null;
        }
    }

    static boolean constantTimeEquals(String expected, String presented) {
        if (expected == null || presented == null) {
            return false;
        }
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }

    private void setCookie(Context ctx, String name, String value, String path, long maxAgeSeconds) {
        StringBuilder c = new StringBuilder(name).append('=').append(value).append("; Path=").append(path)
                .append("; Max-Age=").append(maxAgeSeconds).append("; HttpOnly; SameSite=Strict");
        if (config.secureCookies()) {
            c.append("; Secure");
        }
        ctx.res().addHeader("Set-Cookie", c.toString());
    }

    // --------------------------------------------------------------------------- signing in

    void loginForm(Context ctx) {
        if (sessions.find(ctx.cookie(SESSION_COOKIE)).isPresent()) {
            throw new ConsoleRoutes.Redirect(safeLocal(ctx.queryParam("next"), ConsoleRoutes.HOME));
        }
        renderLogin(ctx, 200, safeLocal(ctx.queryParam("next"), ConsoleRoutes.HOME), null);
    }

    private void renderLogin(Context ctx, int status, String next, String error) {
        String loginCsrf = Sessions.randomToken();
        setCookie(ctx, LOGIN_COOKIE, loginCsrf, "/console/login", 1800);
        ConsoleRoutes.page(ctx.status(status), pages.login(loginCsrf, next, error, auth.demo()));
    }

    void login(Context ctx) {
        if (!sameOrigin(ctx)) {
            throw HttpFailure.forbidden("this sign-in form was not sent from the console itself");
        }
        if (!constantTimeEquals(ctx.cookie(LOGIN_COOKIE), ctx.formParam("csrf"))) {
            throw HttpFailure.forbidden("the sign-in form has expired; open the sign-in page again");
        }
        String next = safeLocal(ctx.formParam("next"), ConsoleRoutes.HOME);
        Actor actor;
        if (auth.demo() && ctx.formParam("demo") != null) {
            actor = Authenticator.DEMO;
        } else {
            actor = auth.byToken(ctx.formParam("token")).orElse(null);
            if (actor == null) {
                log.info("Failed console sign-in from {}", ctx.ip());
                renderLogin(ctx, 401, next, "That token is not valid. Check it and try again.");
                return;
            }
        }
        String id = sessions.create(actor).orElseThrow(() ->
                new HttpFailure(503, "unavailable", "too many people are signed in; try again later", null));
        setCookie(ctx, SESSION_COOKIE, id, "/", sessions.ttl().toSeconds());
        setCookie(ctx, LOGIN_COOKIE, "", "/console/login", 0);
        log.info("{} ({}) signed in to the console from {}", actor.name(), actor.role().word(), ctx.ip());
        throw new ConsoleRoutes.Redirect(next);
    }

    void logout(Context ctx) {
        sessions.remove(ctx.cookie(SESSION_COOKIE));
        setCookie(ctx, SESSION_COOKIE, "", "/", 0);
        throw new ConsoleRoutes.Redirect("/console/login");
    }

    static String safeLocal(String candidate, String fallback) {
        if (candidate == null || candidate.length() > 1000 || !LOCAL_PATH.matcher(candidate).matches()
                || candidate.contains("//") || candidate.contains("/../")) {
            return fallback;
        }
        return candidate;
    }
}
