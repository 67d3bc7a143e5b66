// SPDX-License-Identifier: Apache-2.0
// tests/kat/PubEnv.java - the /Recipients envelopes (CMS EnvelopedData) that
// PDFBox 2 and iText 5 write for the public-key security handler, for the
// known-answer files of tests/kat/make-env-kat.sh (issue 33):
//
//   java PubEnv pdfbox|itext PREFIX PERMISSIONS CERT...
//   java PubEnv open ENVELOPE CERT KEY     (KEY: PKCS#8 PEM, unencrypted)
//
// writes PREFIX-0.der, PREFIX-1.der, ... (one per certificate).  PDFBox:
// through PDDocument.protect and a save (PublicKeySecurityHandler), the
// strings read back from the document's PDEncryption; iText: from
// PdfPublicKeySecurityHandler.getEncodedRecipient, with the Bouncy Castle
// provider registered (iText 5 asks the JCE for RC2 parameters, which only
// Bouncy Castle generates).  "open" reads an envelope as both producers
// do when they open a file (Bouncy Castle's CMSEnvelopedData, the
// RecipientInformation of CERT, JceKeyTransEnvelopedRecipient) and prints
// its content in hexadecimal: tests/check_envelope.c runs it on what
// ps_env_make writes.
import java.io.*;
import java.security.cert.*;
public class PubEnv {
    static void open(String env, String certFile, String keyFile) throws Exception {
        java.security.Security.addProvider(new org.bouncycastle.jce.provider.BouncyCastleProvider());
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        X509Certificate cert;
        try (InputStream in = new FileInputStream(certFile)) { cert = (X509Certificate) cf.generateCertificate(in); }
        String pem = new String(java.nio.file.Files.readAllBytes(new File(keyFile).toPath()), "US-ASCII");
        String b64 = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        java.security.PrivateKey key = java.security.KeyFactory.getInstance("RSA").generatePrivate(
            new java.security.spec.PKCS8EncodedKeySpec(java.util.Base64.getDecoder().decode(b64)));
        byte[] der = java.nio.file.Files.readAllBytes(new File(env).toPath());
        org.bouncycastle.cms.CMSEnvelopedData ed = new org.bouncycastle.cms.CMSEnvelopedData(der);
        org.bouncycastle.cms.RecipientInformation ri = ed.getRecipientInfos().get(
            new org.bouncycastle.cms.jcajce.JceKeyTransRecipientId(cert));
        if (ri == null)
            throw new Exception("no RecipientInfo for " + cert.getSubjectX500Principal());
        byte[] c = ri.getContent(new org.bouncycastle.cms.jcajce.JceKeyTransEnvelopedRecipient(key).setProvider("BC"));
        StringBuilder sb = new StringBuilder();
        for (byte b : c) sb.append(String.format("%02x", b & 0xff));
        System.out.println(sb);
    }

    public static void main(String[] a) throws Exception {
        if (a[0].equals("open")) {
            open(a[1], a[2], a[3]);
            return;
        }
        String lib = a[0]; String out = a[1]; int perms = (int) Long.parseLong(a[2]);
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        X509Certificate[] certs = new X509Certificate[a.length - 3];
        for (int i = 3; i < a.length; i++) try (InputStream in = new FileInputStream(a[i])) { certs[i-3] = (X509Certificate) cf.generateCertificate(in); }
        if (lib.equals("pdfbox")) {
            org.apache.pdfbox.pdmodel.PDDocument d = new org.apache.pdfbox.pdmodel.PDDocument();
            d.addPage(new org.apache.pdfbox.pdmodel.PDPage());
            org.apache.pdfbox.pdmodel.encryption.PublicKeyProtectionPolicy p = new org.apache.pdfbox.pdmodel.encryption.PublicKeyProtectionPolicy();
            for (X509Certificate c : certs) {
                org.apache.pdfbox.pdmodel.encryption.PublicKeyRecipient r = new org.apache.pdfbox.pdmodel.encryption.PublicKeyRecipient();
                r.setX509(c); r.setPermission(new org.apache.pdfbox.pdmodel.encryption.AccessPermission(perms)); p.addRecipient(r);
            }
            p.setEncryptionKeyLength(128);
            d.protect(p);
            d.save(new ByteArrayOutputStream());
            org.apache.pdfbox.pdmodel.encryption.PDEncryption e = d.getEncryption();
            for (int i = 0; i < e.getRecipientsLength(); i++)
                try (FileOutputStream f = new FileOutputStream(out + "-" + i + ".der")) { f.write(e.getRecipientStringAt(i).getBytes()); }
            System.out.println("pdfbox filter " + e.getSubFilter() + " n=" + e.getRecipientsLength());
        } else {
            java.security.Security.addProvider(new org.bouncycastle.jce.provider.BouncyCastleProvider());
            com.itextpdf.text.pdf.PdfPublicKeySecurityHandler h = new com.itextpdf.text.pdf.PdfPublicKeySecurityHandler();
            for (X509Certificate c : certs) h.addRecipient(new com.itextpdf.text.pdf.PdfPublicKeyRecipient(c, perms));
            for (int i = 0; i < certs.length; i++)
                try (FileOutputStream f = new FileOutputStream(out + "-" + i + ".der")) { f.write(h.getEncodedRecipient(i)); }
        }
    }
}
