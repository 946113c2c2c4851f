package io.mailroom.orders;

/**
 * An HTTP-level refusal raised by a handler (wrong content type, body too large, bad path
 * parameter, not found): the status and {@link ApiError} it becomes.
 */
final class HttpProblem extends RuntimeException {

    private final int status;
    private final String field;

    HttpProblem(int status, String field, String message) {
        super(message);
        this.status = status;
        this.field = field;
    }

    int status() {
        return status;
    }

    ApiError body() {
        return new ApiError(getMessage(), field);
    }
}
