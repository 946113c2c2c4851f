package io.mailroom.templates;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.util.Map;

/**
 * Template data as JSON: one object, duplicate keys and trailing content refused, decimals kept
 * exact (an amount renders as written). The module's one configured JSON mapper.
 */
final class TemplateData {

    static final JsonMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    private TemplateData() {
    }

    /** Parses template data: a JSON object, decimals kept exact. */
    static Map<String, Object> parse(String template, String json) throws TemplateException {
        JsonNode node;
        try {
            node = JSON.readTree(json == null ? "" : json);
        } catch (JsonProcessingException e) {
            throw new TemplateException(TemplateException.Kind.BAD_DATA, template,
                    "data is not valid JSON (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")", e);
        }
        if (node == null || !node.isObject()) {
            throw new TemplateException(TemplateException.Kind.BAD_DATA, template, "data must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> data = JSON.convertValue(node, Map.class);
        return data;
    }
}
