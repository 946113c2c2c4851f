package io.mailroom.orders;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;

import java.io.IOException;
import java.math.BigDecimal;
import java.util.Collection;

/**
 * JSON for the order service: a strict mapper and the translation of binding errors into
 * {@link InvalidOrderException}s that name the field.
 *
 * <p>Strict means a request is bound only if it says exactly what it means: unknown fields,
 * duplicate keys, trailing content, {@code 2.5} for a quantity and strings where numbers belong
 * ({@code "quantity": "2"}) or numbers where strings belong are all refused instead of guessed at.
 * Errors are classified by the exception's type and JSON path, never by its message text.
 */
public final class OrderJson {

    private static final ObjectMapper MAPPER = build();

    private OrderJson() {
    }

    /** The shared, strict mapper (thread-safe; do not reconfigure it). */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    private static ObjectMapper build() {
        JsonMapper mapper = JsonMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
        // no silent conversions between JSON's kinds of value ("2" is not 2, 2 is not "2", "" is not [])
        fail(mapper, LogicalType.Textual, CoercionInputShape.Integer, CoercionInputShape.Float, CoercionInputShape.Boolean);
        fail(mapper, LogicalType.Integer, CoercionInputShape.String, CoercionInputShape.EmptyString,
                CoercionInputShape.Float, CoercionInputShape.Boolean);
        // an integer is a fine price (5 means 5.00); a string is not
        fail(mapper, LogicalType.Float, CoercionInputShape.String, CoercionInputShape.EmptyString, CoercionInputShape.Boolean);
        fail(mapper, LogicalType.Collection, CoercionInputShape.String, CoercionInputShape.EmptyString);
        fail(mapper, LogicalType.POJO, CoercionInputShape.String, CoercionInputShape.EmptyString);
        return mapper;
    }

    private static void fail(JsonMapper mapper, LogicalType target, CoercionInputShape... from) {
        for (CoercionInputShape shape : from) {
            mapper.coercionConfigFor(target).setCoercion(shape, CoercionAction.Fail);
        }
    }

    /**
     * Binds a {@link PlaceOrder} from a request body.
     *
     * @throws InvalidOrderException for malformed JSON (field {@code body}), unknown fields and
     *         wrong types (field = the JSON path, e.g. {@code lines[0].quantity})
     */
    public static PlaceOrder readPlaceOrder(byte[] body) {
        return read(body, PlaceOrder.class, "an order");
    }

    /** Binds a {@link ShipOrder}, refusing what {@link #readPlaceOrder} refuses. */
    public static ShipOrder readShipOrder(byte[] body) {
        return read(body, ShipOrder.class, "a shipment");
    }

    /** Binds a {@link CancelOrder}, refusing what {@link #readPlaceOrder} refuses. */
    public static CancelOrder readCancelOrder(byte[] body) {
        return read(body, CancelOrder.class, "a cancellation");
    }

    private static <T> T read(byte[] body, Class<T> type, String what) {
        try {
            T value = MAPPER.readValue(body, type);
            if (value == null) {
                // the document "null"
                throw new InvalidOrderException("body", "the body must be one JSON object");
            }
            return value;
        } catch (JacksonException e) {
            throw invalid(e, what);
        } catch (IOException e) {
            // e.g. a CharConversionException for bytes that are no Unicode encoding at all
            throw new InvalidOrderException("body", "the body is not a JSON document in UTF-8");
        }
    }

    /** The {@link InvalidOrderException} that describes a binding error. */
    static InvalidOrderException invalid(JacksonException e) {
        return invalid(e, "an order");
    }

    private static InvalidOrderException invalid(JacksonException e, String what) {
        if (e instanceof UnrecognizedPropertyException u) {
            return new InvalidOrderException(path(u, "body"), path(u, "body") + " is not a known field");
        }
        if (e instanceof MismatchedInputException m) {
            String field = path(m, null);
            if (field == null) {
                // empty body, top level not an object, or content after the object
                return new InvalidOrderException("body", "the body must be one JSON object");
            }
            return new InvalidOrderException(field, field + " must be " + expected(m.getTargetType()));
        }
        if (e instanceof JsonMappingException m && path(m, null) != null) {
            return new InvalidOrderException(path(m, null), path(m, null) + " has an invalid value");
        }
        if (e instanceof StreamReadException r) {
            JsonLocation at = r.getLocation();
            String where = at == null || at.getLineNr() < 1 ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            return new InvalidOrderException("body", "the body is not well-formed JSON" + where);
        }
        return new InvalidOrderException("body", "the body could not be read as " + what);
    }

    /** The JSON path of the error, e.g. {@code lines[0].quantity}; {@code whenEmpty} at the top level. */
    private static String path(JsonMappingException e, String whenEmpty) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (!path.isEmpty()) {
                    path.append('.');
                }
                path.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        return path.isEmpty() ? whenEmpty : path.toString();
    }

    private static String expected(Class<?> target) {
        if (target == null) {
            return "of another type";
        }
        if (target == String.class) {
            return "a string";
        }
        if (target == Integer.class || target == int.class || target == Long.class || target == long.class) {
            return "an integer";
        }
        if (target == BigDecimal.class || Number.class.isAssignableFrom(target)) {
            return "a number";
        }
        if (Collection.class.isAssignableFrom(target) || target.isArray()) {
            return "an array";
        }
        return "an object";
    }
}
