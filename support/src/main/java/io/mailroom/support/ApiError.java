package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of every error answer of the JSON API.
 *
 * @param error     what went wrong, in words
 * @param code      a stable word for programs: bad_request, unauthorized, forbidden, not_found, busy, not_allowed,
 *                  suppressed (a retry while the recipient's suppression is in force), ...
 * @param parameter the request parameter at fault, for 400
 * @param status    for not_allowed: the email's current status
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ApiError(String error, String code, String parameter, String status) {

    public static final String NOT_ALLOWED = "not_allowed";
    public static final String SUPPRESSED = "suppressed";

    public ApiError(String error, String code, String parameter) {
        this(error, code, parameter, null);
    }
}
