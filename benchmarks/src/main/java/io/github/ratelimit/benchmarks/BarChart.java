package io.github.ratelimit.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import javax.imageio.ImageIO;

/**
 * A grouped bar chart (groups = modes, bars = contenders) drawn with Java2D into a PNG.
 */
final class BarChart {

	private static final Color[] COLORS = { new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
			new Color(0xC44E52), new Color(0x8172B3), new Color(0x937860) };

	private BarChart() {
	}

	static void write(Path file, String title, List<String> groups, List<String> series, double[][] values,
			String unit) throws IOException {
		int width = 1100;
		int height = 560;
		BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
		Graphics2D g = image.createGraphics();
		g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
		g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
		g.setColor(Color.WHITE);
		g.fillRect(0, 0, width, height);
		int left = 90;
		int right = 30;
		int top = 60;
		int bottom = 110;
		double max = 0;
		for (double[] row : values) {
			for (double value : row) {
				max = Math.max(max, value);
			}
		}
		max = niceCeiling(max);
		g.setColor(Color.BLACK);
		g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
		g.drawString(title, left, 35);
		g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
		int plotHeight = height - top - bottom;
		int plotWidth = width - left - right;
		for (int i = 0; i <= 5; i++) {
			int y = top + plotHeight - plotHeight * i / 5;
			g.setColor(new Color(0xDDDDDD));
			g.setStroke(new BasicStroke(1));
			g.drawLine(left, y, width - right, y);
			g.setColor(Color.DARK_GRAY);
			String label = String.format(Locale.ROOT, "%,.0f", max * i / 5);
			g.drawString(label, left - 10 - g.getFontMetrics().stringWidth(label), y + 4);
		}
		g.drawString(unit, 10, top - 10);
		int groupWidth = plotWidth / groups.size();
		int barWidth = (groupWidth - 30) / series.size();
		for (int gi = 0; gi < groups.size(); gi++) {
			int x0 = left + gi * groupWidth + 15;
			for (int si = 0; si < series.size(); si++) {
				double value = values[gi][si];
				int barHeight = (int) (plotHeight * value / max);
				g.setColor(COLORS[si % COLORS.length]);
				g.fillRect(x0 + si * barWidth, top + plotHeight - barHeight, barWidth - 4, barHeight);
			}
			g.setColor(Color.BLACK);
			String label = groups.get(gi);
			g.drawString(label, x0 + (groupWidth - 30 - g.getFontMetrics().stringWidth(label)) / 2,
					top + plotHeight + 18);
		}
		int legendX = left;
		int legendY = height - 50;
		for (int si = 0; si < series.size(); si++) {
			g.setColor(COLORS[si % COLORS.length]);
			g.fillRect(legendX, legendY, 14, 14);
			g.setColor(Color.BLACK);
			g.drawString(series.get(si), legendX + 20, legendY + 12);
			legendX += 40 + g.getFontMetrics().stringWidth(series.get(si));
		}
		g.dispose();
		ImageIO.write(image, "png", file.toFile());
	}

	private static double niceCeiling(double value) {
		if (value <= 0) {
			return 1;
		}
		double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
		for (double step : new double[] { 1, 2, 2.5, 5, 10 }) {
			if (step * magnitude >= value) {
				return step * magnitude;
			}
		}
		return 10 * magnitude;
	}

}
