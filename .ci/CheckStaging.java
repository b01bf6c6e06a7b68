import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathFactory;

import org.w3c.dom.Document;

/**
 * Checks a staged (deployed to a file repository) release against what Maven Central requires of each artifact:
 * coordinates, name, description, URL, a license, a developer, SCM, the -sources and -javadoc jars, checksums, and
 * .asc signatures when signing was on. Also that the POM is a consumer POM: no parent (the parent is not
 * published), no build section, no unresolved ${...}. And the SBOM this project ships beside each jar.
 * Run as a source file: {@code java .ci/CheckStaging.java <repository> <groupId> <version> <signed:true|false> <artifactId>...}.
 */
public class CheckStaging {

	private static final String[] REQUIRED = { "groupId", "artifactId", "version", "name", "description", "url",
			"licenses/license/name", "licenses/license/url", "developers/developer/name", "scm/url",
			"scm/connection" };

	public static void main(String[] args) throws Exception {
		Path repository = Path.of(args[0]);
		String groupId = args[1];
		String version = args[2];
		boolean signed = Boolean.parseBoolean(args[3]);
		List<String> problems = new ArrayList<>();
		for (int i = 4; i < args.length; i++) {
			check(repository, groupId, args[i], version, signed, problems);
		}
		problems.forEach(problem -> System.out.println("  MISSING/WRONG: " + problem));
		if (!problems.isEmpty()) {
			System.exit(1);
		}
		System.out.printf("Staging check: %d modules of %s:%s pass (signatures %s).%n", args.length - 4, groupId,
				version, signed ? "checked" : "not checked: no GPG key configured");
	}

	private static void check(Path repository, String groupId, String artifactId, String version, boolean signed,
			List<String> problems) throws Exception {
		Path dir = repository.resolve(groupId.replace('.', '/')).resolve(artifactId).resolve(version);
		String base = artifactId + "-" + version;
		Path pom = dir.resolve(base + ".pom");
		List<String> files = new ArrayList<>(List.of(base + ".pom", base + ".jar", base + "-sources.jar",
				base + "-javadoc.jar", base + "-cyclonedx.json", base + "-cyclonedx.xml"));
		for (String file : List.copyOf(files)) {
			files.add(file + ".sha1");
			files.add(file + ".md5");
			if (signed) {
				files.add(file + ".asc");
			}
		}
		for (String file : files) {
			if (!Files.isRegularFile(dir.resolve(file))) {
				problems.add(artifactId + ": no " + file);
			}
		}
		if (!Files.isRegularFile(pom)) {
			return;
		}
		String text = Files.readString(pom);
		Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
		XPath xpath = XPathFactory.newInstance().newXPath();
		for (String element : REQUIRED) {
			String value = xpath.evaluate("/project/" + element, document).strip();
			if (value.isEmpty()) {
				problems.add(artifactId + ": the POM has no " + element);
			}
		}
		expect(xpath.evaluate("/project/groupId", document), groupId, artifactId + ": groupId", problems);
		expect(xpath.evaluate("/project/artifactId", document), artifactId, artifactId + ": artifactId", problems);
		expect(xpath.evaluate("/project/version", document), version, artifactId + ": version", problems);
		for (String noise : new String[] { "<parent>", "<build>", "<profiles>", "<dependencyManagement>", "${" }) {
			if (text.contains(noise)) {
				problems.add(artifactId + ": the consumer POM still has " + noise);
			}
		}
	}

	private static void expect(String actual, String expected, String what, List<String> problems) {
		if (!expected.equals(actual.strip())) {
			problems.add(what + " is '" + actual.strip() + "', expected '" + expected + "'");
		}
	}

}
