package io.mailroom.support;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Signs in to the console as a browser does (login form, its double-submit cookie, the token). */
final class ConsoleLogin {

    private ConsoleLogin() {
    }

    /** @return the session cookie's value */
    static String signIn(Http http, String token) {
        HttpResponse<String> form = http.get("/console/login");
        assertThat(form.statusCode()).isEqualTo(200);
        HttpResponse<String> r = http.postForm("/console/login",
                Map.of("csrf", Http.hidden(form.body(), "csrf"), "token", token, "next", "/console/about"),
                "Cookie", "mailroom_login=" + Http.cookies(form).get("mailroom_login"), "Origin", http.origin());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
        String session = Http.cookies(r).get("mailroom_session");
        assertThat(session).isNotBlank();
        return session;
    }
}
