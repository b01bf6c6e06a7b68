# Sourced by benchmarks/lua-loop and benchmarks/batch-load: finds the distribution's Redis 7 tools (beside
# RATELIMIT_REDIS_SERVER's launcher as .ci/fetch-redis7 unpacks them, else fetched into target/redis7) and starts a
# private redis-server on a unix socket in a temporary directory, stopped on exit. Sets bin and socket; defines cli.
# Run from the repository's root. Extra arguments of start_redis go to redis-server.
dir=""
if [[ -n "${RATELIMIT_REDIS_SERVER:-}" && -x "$(dirname "$RATELIMIT_REDIS_SERVER")/root/usr/bin/redis-benchmark" ]]; then
	dir=$(dirname "$RATELIMIT_REDIS_SERVER")
elif [[ -x target/redis7/root/usr/bin/redis-benchmark ]] || bash .ci/fetch-redis7 target/redis7 > /dev/null; then
	dir="$PWD/target/redis7"
fi
[[ -n "$dir" ]] || { echo "$0: no Redis 7 packages (see .ci/fetch-redis7)" >&2; exit 1; }
export LD_LIBRARY_PATH="$dir/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin="$dir/root/usr/bin"

start_redis() {
	work=$(mktemp -d)
	socket="$work/redis.sock"
	"$bin/redis-server" --port 0 --unixsocket "$socket" --save '' --appendonly no --dir "$work" --daemonize yes \
		--pidfile "$work/redis.pid" "$@" > /dev/null
	trap 'kill "$(cat "$work/redis.pid")" 2> /dev/null; rm -rf "$work"' EXIT
	for _ in $(seq 50); do [[ -S "$socket" ]] && break; sleep 0.1; done
}

cli() { "$bin/redis-cli" -s "$socket" "$@"; }

# source_of <revision or 'work'> <file under scripts/>
source_of() {
	local path="ratelimit-core/src/main/resources/scripts/$2"
	if [[ "$1" == work ]]; then cat "$path"; else git show "$1:$path"; fi
}
