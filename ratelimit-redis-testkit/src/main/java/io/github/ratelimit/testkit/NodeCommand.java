package io.github.ratelimit.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Produces the {@code redis-server} arguments for one start attempt of a node. Called again with a
 * new port and directory when an attempt fails, so it may write files (such as a sentinel
 * configuration) into the directory.
 */
@FunctionalInterface
interface NodeCommand {

	/**
	 * Returns the arguments that follow the executable.
	 * @param port the port the node must listen on
	 * @param directory the node's own, empty working directory
	 * @return the command line arguments
	 * @throws IOException if a file needed by the node cannot be written
	 */
	List<String> arguments(int port, Path directory) throws IOException;

	/**
	 * A plain data node: loopback only, no persistence, in the foreground.
	 * @param extraArguments arguments appended after the defaults, for example cluster settings
	 * @return the command
	 */
	static NodeCommand dataNode(List<String> extraArguments) {
		return (port, directory) -> {
			List<String> arguments = new ArrayList<>(List.of("--port", String.valueOf(port), "--bind",
					Ports.LOOPBACK_HOST, "--save", "", "--appendonly", "no", "--dir", directory.toString(),
					"--protected-mode", "no", "--daemonize", "no"));
			arguments.addAll(extraArguments);
			return arguments;
		};
	}

}
