/** QR code images (npm `qrcode`): PNG and SVG for GET /requests/{id}/qr, and text for a terminal (npm run demo). */
import QRCode from "qrcode";

const OPTIONS = { errorCorrectionLevel: "M" as const, margin: 2 };

export const qrPng = (text: string): Promise<Buffer> => QRCode.toBuffer(text, { ...OPTIONS, type: "png", width: 360 });
export const qrSvg = (text: string): Promise<string> => QRCode.toString(text, { ...OPTIONS, type: "svg" });
export const qrTerminal = (text: string): Promise<string> =>
  QRCode.toString(text, { ...OPTIONS, type: "terminal", small: true });
