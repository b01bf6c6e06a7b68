package io.github.ratelimit.testkit;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A bare RESP client on a plain socket, for tests that must see exactly what happens on one TCP
 * connection (no reconnects, no command queue): a reset, a refused connect, a reply that never
 * comes or comes late.
 */
final class Resp implements AutoCloseable {

	private static final int CONNECT_TIMEOUT_MILLIS = 2000;

	private final Socket socket;

	private Resp(Socket socket) {
		this.socket = socket;
	}

	/**
	 * Connects to the address.
	 * @param address where to connect
	 * @param readTimeout how long a read may block before {@link java.net.SocketTimeoutException}
	 * @return the connected client
	 * @throws IOException if the connect fails, e.g. {@link java.net.ConnectException} when refused
	 */
	static Resp connect(HostAndPort address, Duration readTimeout) throws IOException {
		Socket socket = new Socket();
		try {
			socket.connect(new InetSocketAddress(address.host(), address.port()), CONNECT_TIMEOUT_MILLIS);
			socket.setSoTimeout((int) readTimeout.toMillis());
			socket.setTcpNoDelay(true);
			return new Resp(socket);
		}
		catch (IOException ex) {
			socket.close();
			throw ex;
		}
	}

	/** Changes how long a read may block, e.g. to wait generously once a reply is expected. */
	void readTimeout(Duration readTimeout) throws IOException {
		this.socket.setSoTimeout((int) readTimeout.toMillis());
	}

	/** Sends a command and reads its reply, see {@link #readReply()}. */
	String command(String... arguments) throws IOException {
		send(arguments);
		return readReply();
	}

	void send(String... arguments) throws IOException {
		StringBuilder command = new StringBuilder("*").append(arguments.length).append("\r\n");
		for (String argument : arguments) {
			byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
			command.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
		}
		OutputStream out = this.socket.getOutputStream();
		out.write(command.toString().getBytes(StandardCharsets.UTF_8));
		out.flush();
	}

	/**
	 * Reads one reply: a status, error or integer line as is ({@code +PONG}, {@code -ERR ...},
	 * {@code :1}), a bulk string as its content, a null bulk string as {@code null}.
	 */
	String readReply() throws IOException {
		InputStream in = this.socket.getInputStream();
		String line = InfoProbe.readLine(in);
		if (line.startsWith("$")) {
			int length = Integer.parseInt(line.substring(1));
			if (length < 0) {
				return null;
			}
			byte[] content = in.readNBytes(length + 2);
			if (content.length < length + 2) {
				throw new EOFException("Connection closed in a bulk reply");
			}
			return new String(content, 0, length, StandardCharsets.UTF_8);
		}
		return line;
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

}
