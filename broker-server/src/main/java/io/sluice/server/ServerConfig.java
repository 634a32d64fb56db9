package io.sluice.server;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Resolved configuration, lowest precedence first: the keys' defaults, the role's defaults (e.g. a metadata member's
 * admin port), the config file, the environment, then the command line's explicit flags.
 */
public final class ServerConfig {
    private final Map<String, String> values;

    private ServerConfig(Map<String, String> values) {
        this.values = values;
    }

    public static ServerConfig load(Path file, Map<String, String> environment, Map<String, String> overrides) {
        return load(file, environment, overrides, Map.of());
    }

    public static ServerConfig load(Path file, Map<String, String> environment, Map<String, String> overrides,
                                    Map<String, String> roleDefaults) {
        Map<String, String> values = new HashMap<>(roleDefaults);
        if (file != null) {
            Properties props = new Properties();
            try (Reader r = Files.newBufferedReader(file)) {
                props.load(r);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read config file " + file + ": " + e.getMessage(), e);
            }
            for (String name : props.stringPropertyNames()) {
                if (ServerConfigKeys.all().stream().noneMatch(k -> k.name().equals(name))) {
                    throw new IllegalArgumentException("unknown configuration key in " + file + ": " + name);
                }
                values.put(name, props.getProperty(name));
            }
        }
        for (ConfigKey<?> k : ServerConfigKeys.all()) {
            String env = environment.get(k.environmentName());
            if (env != null) {
                values.put(k.name(), env);
            }
        }
        values.putAll(overrides);
        ServerConfig config = new ServerConfig(values);
        ServerConfigKeys.all().forEach(config::get); // validate every value now, not on first use
        return config;
    }

    /** This configuration with one key set (a component's own data folder inside a combined node's, say). */
    public ServerConfig with(ConfigKey<?> key, String value) {
        Map<String, String> copy = new HashMap<>(values);
        copy.put(key.name(), value);
        ServerConfig config = new ServerConfig(copy);
        config.get(key);
        return config;
    }

    /** Whether {@code key} was given (config file, environment, command line, or the role's defaults). */
    public boolean isSet(ConfigKey<?> key) {
        return values.containsKey(key.name());
    }

    public <T> T get(ConfigKey<T> key) {
        String raw = values.get(key.name());
        return raw == null ? key.defaultValue() : key.parser().apply(raw);
    }
}
