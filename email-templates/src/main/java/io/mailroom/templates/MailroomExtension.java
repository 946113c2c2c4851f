package io.mailroom.templates;

import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.extension.AbstractExtension;
import io.pebbletemplates.pebble.extension.Filter;
import io.pebbletemplates.pebble.extension.Function;
import io.pebbletemplates.pebble.template.EvaluationContext;
import io.pebbletemplates.pebble.template.PebbleTemplate;

import java.math.BigDecimal;
import java.text.NumberFormat;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.chrono.IsoChronology;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.format.FormatStyle;
import java.util.Currency;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What Mailroom's templates get beyond Pebble's own tags and filters:
 * <ul>
 *   <li>{@code t("key")}, {@code t("key", {"name": value})}: the wording for the email's locale
 *       (see {@link Messages}); a key no messages file has fails the render, naming the key;</li>
 *   <li>{@code lang()}: the email's locale as a BCP 47 tag, for {@code <html lang>};</li>
 *   <li>{@code amount | money(currency)}: a decimal amount in the locale's currency format
 *       ({@code 31,90 €} in French, {@code 25.000 ₫} in Vietnamese);</li>
 *   <li>{@code instant | datetime} or {@code datetime("long", "Asia/Ho_Chi_Minh")}: an ISO-8601
 *       timestamp in the locale's words, in the given zone (UTC by default).</li>
 * </ul>
 * The messages of the template being rendered reach {@code t} through {@link #scope}, set for the
 * duration of one render on the rendering thread, so no template can read or change them.
 */
final class MailroomExtension extends AbstractExtension {

    /** The messages of the render in progress on this thread. */
    static final ThreadLocal<Messages> scope = new ThreadLocal<>();

    /** A failure raised inside a template, carrying our own classification through Pebble. */
    static final class Failure extends PebbleException {
        final TemplateException.Kind kind;
        final String detail;

        Failure(TemplateException.Kind kind, String detail, PebbleTemplate self, int line) {
            super(null, detail, line, self == null ? null : self.getName());
            this.kind = kind;
            this.detail = detail;
        }
    }

    @Override
    public Map<String, Function> getFunctions() {
        return Map.of("t", new Translate(), "lang", new Lang());
    }

    @Override
    public Map<String, Filter> getFilters() {
        return Map.of("money", new Money(), "datetime", new DateTime());
    }

    private static final class Translate implements Function {
        @Override
        public List<String> getArgumentNames() {
            return List.of("key", "args");
        }

        @Override
        public Object execute(Map<String, Object> args, PebbleTemplate self, EvaluationContext context, int line) {
            Object key = args.get("key");
            if (!(key instanceof String k) || k.isBlank()) {
                throw new Failure(TemplateException.Kind.SYNTAX, "t() needs a message key as its first argument", self, line);
            }
            Object params = args.get("args");
            if (params != null && !(params instanceof Map)) {
                throw new Failure(TemplateException.Kind.SYNTAX, "t(\"" + k + "\", ...) takes a map of placeholders, e.g. {\"name\": value}", self, line);
            }
            Messages messages = scope.get();
            Optional<String> text;
            try {
                text = messages == null ? Optional.empty() : messages.format(k, (Map<?, ?>) params);
            } catch (Messages.MissingPlaceholder e) {
                throw new Failure(TemplateException.Kind.MISSING_VARIABLE, e.getMessage(), self, line);
            }
            return text.orElseThrow(() -> new Failure(TemplateException.Kind.MISSING_MESSAGE,
                    "no message '" + k + "' for locale " + context.getLocale().toLanguageTag(), self, line));
        }
    }

    private static final class Lang implements Function {
        @Override
        public List<String> getArgumentNames() {
            return List.of();
        }

        @Override
        public Object execute(Map<String, Object> args, PebbleTemplate self, EvaluationContext context, int line) {
            return context.getLocale().toLanguageTag();
        }
    }

    private static final Map<CurrencyFormatKey, NumberFormat> CURRENCY_FORMATS = new ConcurrentHashMap<>();
    private static final Map<DateFormatKey, DateTimeFormatter> DATE_FORMATS = new ConcurrentHashMap<>();

    private record CurrencyFormatKey(Locale locale, Currency currency) {
    }

    private record DateFormatKey(FormatStyle style, Locale locale) {
    }

    private static final class Money implements Filter {
        @Override
        public List<String> getArgumentNames() {
            return List.of("currency");
        }

        @Override
        public Object apply(Object input, Map<String, Object> args, PebbleTemplate self, EvaluationContext context, int line) {
            BigDecimal amount = decimal(input, self, line);
            Object code = args.get("currency");
            Currency currency;
            try {
                currency = Currency.getInstance(String.valueOf(code));
            } catch (IllegalArgumentException | NullPointerException e) {
                throw new Failure(TemplateException.Kind.BAD_DATA, "money: '" + code + "' is not an ISO 4217 currency code", self, line);
            }
            // A NumberFormat is costly to build and not thread-safe: build one per locale and
            // currency, and format with a clone of it.
            NumberFormat f = (NumberFormat) CURRENCY_FORMATS.computeIfAbsent(new CurrencyFormatKey(context.getLocale(), currency), k -> {
                NumberFormat n = NumberFormat.getCurrencyInstance(context.getLocale());
                n.setCurrency(currency);
                n.setMinimumFractionDigits(Math.max(currency.getDefaultFractionDigits(), 0));
                n.setMaximumFractionDigits(Math.max(currency.getDefaultFractionDigits(), 0));
                return n;
            }).clone();
            return f.format(amount);
        }

        private static BigDecimal decimal(Object input, PebbleTemplate self, int line) {
            if (input instanceof BigDecimal d) {
                return d;
            }
            if (input instanceof Number n) {
                return new BigDecimal(n.toString());
            }
            if (input instanceof String s) {
                try {
                    return new BigDecimal(s);
                } catch (NumberFormatException e) {
                    // reported below
                }
            }
            throw new Failure(TemplateException.Kind.BAD_DATA, "money: '" + input + "' is not a decimal amount", self, line);
        }
    }

    private static final class DateTime implements Filter {
        @Override
        public List<String> getArgumentNames() {
            return List.of("style", "zone");
        }

        @Override
        public Object apply(Object input, Map<String, Object> args, PebbleTemplate self, EvaluationContext context, int line) {
            Instant instant;
            try {
                instant = input instanceof Instant i ? i : IsoTimestamps.parse(String.valueOf(input));
            } catch (DateTimeParseException e) {
                throw new Failure(TemplateException.Kind.BAD_DATA, "datetime: '" + input + "' is not an ISO-8601 timestamp with an offset", self, line);
            }
            FormatStyle style;
            try {
                style = FormatStyle.valueOf(String.valueOf(args.getOrDefault("style", "medium")).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new Failure(TemplateException.Kind.SYNTAX, "datetime: style must be short, medium, long or full", self, line);
            }
            ZoneId zone;
            try {
                zone = ZoneId.of(String.valueOf(args.getOrDefault("zone", "UTC")));
            } catch (DateTimeException e) {
                throw new Failure(TemplateException.Kind.BAD_DATA, "datetime: '" + args.get("zone") + "' is not a time zone", self, line);
            }
            Locale locale = context.getLocale();
            return DATE_FORMATS.computeIfAbsent(new DateFormatKey(style, locale), DateTime::formatter).format(instant.atZone(zone));
        }

        /**
         * The style's pattern in the locale, looked up once: what {@link DateTimeFormatter#ofLocalizedDateTime}
         * prints, without looking the pattern up again at every format (a profile found that half of
         * this filter's time). The date takes the style; the time part stops at medium (hours,
         * minutes, seconds), since a long time would name the zone a second time.
         */
        private static DateTimeFormatter formatter(DateFormatKey key) {
            FormatStyle time = key.style().compareTo(FormatStyle.MEDIUM) > 0 ? FormatStyle.MEDIUM : key.style();
            return DateTimeFormatter.ofPattern(DateTimeFormatterBuilder.getLocalizedDateTimePattern(key.style(), time,
                    IsoChronology.INSTANCE, key.locale()), key.locale());
        }
    }
}
