package io.github.ratelimit.testkit;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * Asks a port for {@code INFO server} over a plain socket. Used to detect when a freshly started
 * process accepts commands, and that the process answering is really ours (its {@code process_id}
 * matches), without the weight of a client library.
 */
final class InfoProbe {

	private static final int CONNECT_TIMEOUT_MILLIS = 250;

	private static final int READ_TIMEOUT_MILLIS = 500;

	private static final int MAX_REPLY_BYTES = 1 << 20;

	private InfoProbe() {
	}

	/**
	 * Returns the process id reported by the Redis process listening on the port.
	 * @param port the loopback port
	 * @return the process id, or {@code null} if nothing answers or the server is not ready yet
	 */
	static @Nullable Long processId(int port) {
		String info = infoServer(port);
		if (info == null) {
			return null;
		}
		for (String line : info.split("\r\n")) {
			if (line.startsWith("process_id:")) {
				return Long.parseLong(line.substring("process_id:".length()).trim());
			}
		}
		return null;
	}

	private static @Nullable String infoServer(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(Ports.LOOPBACK_HOST, port), CONNECT_TIMEOUT_MILLIS);
			socket.setSoTimeout(READ_TIMEOUT_MILLIS);
			OutputStream out = socket.getOutputStream();
			out.write("INFO server\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			String header = readLine(in);
			if (!header.startsWith("$")) {
				return null; // e.g. "-LOADING ..." while the server is starting
			}
			int length = Integer.parseInt(header.substring(1));
			if (length < 0 || length > MAX_REPLY_BYTES) {
				return null;
			}
			return new String(in.readNBytes(length), StandardCharsets.UTF_8);
		}
		catch (IOException | NumberFormatException ex) {
			return null;
		}
	}

	/**
	 * Reads one RESP line, without its {@code CRLF}.
	 * @param in the stream
	 * @return the line
	 * @throws IOException when reading fails ({@link EOFException} when the connection closes first)
	 */
	static String readLine(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int previous = -1;
		int current;
		while ((current = in.read()) != -1) {
			if (previous == '\r' && current == '\n') {
				byte[] bytes = line.toByteArray();
				return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
			}
			line.write(current);
			previous = current;
		}
		throw new EOFException("Connection closed before a complete reply line was read");
	}

}
