import { useEffect, useState } from 'react';
import QRCode from 'qrcode';

/** The WhatsApp linking code as a scannable image. */
export function QrCode({ text }: { text: string }) {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    QRCode.toDataURL(text, { margin: 1, width: 240 }).then((u) => alive && setUrl(u), () => alive && setUrl(null));
    return () => {
      alive = false;
    };
  }, [text]);
  if (!url) return <pre className="small">{text}</pre>;
  return (
    <div className="qr">
      <img src={url} width={240} height={240} alt="WhatsApp linking QR code: scan it in WhatsApp under Linked devices" />
    </div>
  );
}
