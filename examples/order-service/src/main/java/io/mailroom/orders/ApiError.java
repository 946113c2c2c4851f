package io.mailroom.orders;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The JSON body of every error answer of the order API: {@code {"error": "...", "field": "..."}}.
 *
 * @param error what is wrong, for a person to read
 * @param field the offending input ({@code customerEmail}, {@code lines[0].quantity}, {@code body},
 *              {@code Content-Type}, {@code id}); absent when no single input is to blame
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ApiError(String error, String field) {
}
