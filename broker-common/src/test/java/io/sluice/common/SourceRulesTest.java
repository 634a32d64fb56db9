package io.sluice.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Rules every module's main code keeps, checked over the repository's sources (the build fails on a break): no inline
 * fully-qualified type names in code where an import would do. A qualified name stays only where its simple name is
 * taken (another import, a type declared in the file or its package, a {@code java.lang} type).
 */
class SourceRulesTest {
    private static final Set<String> ROOTS = Set.of("java", "javax", "org", "io", "com", "software", "picocli", "jdk");
    private static final Pattern QUALIFIED = Pattern.compile("(?<![\\w.])((?:[a-z][a-z0-9_]*\\.)+)([A-Z][A-Za-z0-9_]*)");
    private static final Pattern IMPORT = Pattern.compile("(?m)^import\\s+(?!static)([\\w.]+)\\.(\\w+);");
    private static final Pattern HEADER = Pattern.compile("(?m)^(package|import)\\s[^\\n]*;");
    private static final Pattern DECLARED = Pattern.compile("\\b(?:class|interface|enum|record)\\s+([A-Z]\\w*)");

    @Test
    void mainCodeImportsWhatItNames() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path file : mainSources()) {
            found.addAll(qualifiedNames(file));
        }
        assertEquals(List.of(), found, "import these types instead of naming them in full");
    }

    @Test
    void theRuleSeesAQualifiedNameInCodeAndNotInCommentsOrStrings() {
        String source = "package a.b;\nimport java.util.List;\n/** {@link java.util.Map} */\nclass C {\n"
                + "  // java.util.Set here\n  String s = \"java.util.Deque\";\n  java.util.Queue<String> q;\n"
                + "  java.util.List<String> l;\n  io.other.C c;\n}\n";
        assertEquals(List.of("java.util.Queue", "java.util.List"), qualifiedNames(source, Set.of("C")),
                "Queue could be imported, List is imported already; another package's C is not: C is declared here");
    }

    private static List<Path> mainSources() throws IOException {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("broker-common")) && root.getParent() != null) {
            root = root.getParent();
        }
        assertTrue(Files.isDirectory(root.resolve("broker-common")), "the repository root above " + Path.of(""));
        try (Stream<Path> files = Files.walk(root)) {
            List<Path> out = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> p.toString().contains("/src/main/java/"))
                    .filter(p -> !p.toString().contains("/target/")).toList();
            assertTrue(out.size() > 100, "main sources found: " + out.size());
            return out;
        }
    }

    private static List<String> qualifiedNames(Path file) throws IOException {
        Set<String> samePackage = new HashSet<>();
        try (Stream<Path> siblings = Files.list(file.getParent())) {
            siblings.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".java"))
                    .forEach(n -> samePackage.add(n.substring(0, n.length() - 5)));
        }
        return qualifiedNames(Files.readString(file), samePackage).stream().map(n -> file + ": " + n).toList();
    }

    /** The qualified names in code (not comments or strings) whose simple name an import could give. */
    static List<String> qualifiedNames(String source, Set<String> samePackage) {
        Map<String, String> imports = new HashMap<>();
        Matcher im = IMPORT.matcher(source);
        while (im.find()) {
            imports.put(im.group(2), im.group(1) + "." + im.group(2));
        }
        Set<String> declared = new HashSet<>();
        Matcher dm = DECLARED.matcher(source);
        while (dm.find()) {
            declared.add(dm.group(1));
        }
        int headerEnd = 0;
        Matcher hm = HEADER.matcher(source);
        while (hm.find()) {
            headerEnd = hm.end();
        }
        boolean[] code = codeMask(source);
        List<String> out = new ArrayList<>();
        Matcher m = QUALIFIED.matcher(source);
        while (m.find()) {
            String pkg = m.group(1).substring(0, m.group(1).length() - 1);
            String simple = m.group(2);
            if (m.start() < headerEnd || !code[m.start()] || !ROOTS.contains(pkg.substring(0, pkg.indexOf('.') < 0
                    ? pkg.length() : pkg.indexOf('.')))) {
                continue;
            }
            String full = pkg + "." + simple;
            boolean taken = (imports.containsKey(simple) && !imports.get(simple).equals(full))
                    || declared.contains(simple) || samePackage.contains(simple) || javaLang(simple, pkg);
            if (!taken) {
                out.add(full);
            }
        }
        return out;
    }

    /** A java.lang type's name, when the qualified one is another package's type of that name. */
    private static boolean javaLang(String simple, String pkg) {
        if (pkg.equals("java.lang")) {
            return false;
        }
        try {
            Class.forName("java.lang." + simple);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** Which characters are code: not in a comment, a string, a text block or a character literal. */
    private static boolean[] codeMask(String s) {
        boolean[] code = new boolean[s.length()];
        int i = 0;
        while (i < s.length()) {
            int end;
            if (s.startsWith("//", i)) {
                end = s.indexOf('\n', i);
            } else if (s.startsWith("/*", i)) {
                end = s.indexOf("*/", i + 2);
                end = end < 0 ? -1 : end + 2;
            } else if (s.startsWith("\"\"\"", i)) {
                end = s.indexOf("\"\"\"", i + 3);
                end = end < 0 ? -1 : end + 3;
            } else if (s.charAt(i) == '"' || s.charAt(i) == '\'') {
                char quote = s.charAt(i);
                end = i + 1;
                while (end < s.length() && s.charAt(end) != quote) {
                    end += s.charAt(end) == '\\' ? 2 : 1;
                }
                end++;
            } else {
                code[i++] = true;
                continue;
            }
            i = end < 0 || end > s.length() ? s.length() : end;
        }
        return code;
    }
}
