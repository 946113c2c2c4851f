package io.mailroom.support;

/** An answer other than success, raised by a handler and rendered as JSON (API) or a page (console). */
public final class HttpFailure extends RuntimeException {

    private final int status;
    private final String code;
    private final String parameter;

    HttpFailure(int status, String code, String message, String parameter) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.parameter = parameter;
    }

    static HttpFailure unauthorized(String message) {
        return new HttpFailure(401, "unauthorized", message, null);
    }

    static HttpFailure forbidden(String message) {
        return new HttpFailure(403, "forbidden", message, null);
    }

    static HttpFailure notFound(String message, String parameter) {
        return new HttpFailure(404, "not_found", message, parameter);
    }

    /** The HTTP status the surfaces answer with; the CLI maps it to an exit code. */
    public int status() {
        return status;
    }

    String code() {
        return code;
    }

    String parameter() {
        return parameter;
    }
}
