// Inlined as it is, this string would end the page's <script> element here: EmbedPage.cmake refuses it.
const markup = '</SCRIPT><p>the rest of the script, as HTML</p>';
