package io.sluice.server;

import java.util.Locale;
import java.util.function.Function;

/**
 * One configuration key: its name, type, default, bounds and one-line documentation. Values come from (lowest
 * first) the default, the config file, the environment ({@code sluice.data-dir} is {@code SLUICE_DATA_DIR}), and
 * the command line.
 */
public record ConfigKey<T>(String name, String type, T defaultValue, Function<String, T> parser, String doc) {

    public static ConfigKey<Integer> integer(String name, int defaultValue, int min, int max, String doc) {
        return new ConfigKey<>(name, "int [" + min + ", " + max + "]", defaultValue, s -> {
            int v;
            try {
                v = Integer.parseInt(s.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be an integer: " + s);
            }
            if (v < min || v > max) {
                throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "]: " + v);
            }
            return v;
        }, doc);
    }

    public static ConfigKey<String> string(String name, String defaultValue, String doc) {
        return new ConfigKey<>(name, "string", defaultValue, s -> s, doc);
    }

    public static ConfigKey<Boolean> bool(String name, boolean defaultValue, String doc) {
        return new ConfigKey<>(name, "boolean", defaultValue, s -> {
            if (!s.equalsIgnoreCase("true") && !s.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException(name + " must be true or false: " + s);
            }
            return Boolean.parseBoolean(s);
        }, doc);
    }

    /** The environment variable that overrides this key. */
    public String environmentName() {
        return name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }
}
